package bot

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Card is a transport-neutral rich answer: Slack renders it as Block Kit,
// the console as text.
type Card struct {
	Title    string
	URL      string // link of the title
	Headline string // text above the title (alerts)
	Fields   []Field
	Lines    []string // a list: last conversations, search results
	Buttons  []Button
	Notes    []string // small print
}

// Field is one label/value pair of a card.
type Field struct{ Label, Value string }

// Button is one button of a card; Value carries the ticket id.
type Button struct {
	ActionID string
	Label    string
	Value    string
	Style    string // "", "primary" or "danger"
}

// Button action ids; a click comes back with one of these.
const (
	ActionAssignMe    = "deskbot_assign_me"
	ActionAcknowledge = "deskbot_ack"
	ActionResolve     = "deskbot_resolve"
	ActionClose       = "deskbot_close"
)

// CardNames are the names a ticket card shows for the ticket's ids.
type CardNames struct {
	Status string // the status's name (custom names included)
	Agent  string // "" when unassigned
	Group  string // "" when none
}

// lastConversations is how many conversations a ticket card lists.
const lastConversations = 3

// TicketCard renders a ticket; it is pure so that it can be golden-tested.
func TicketCard(t *sdclient.Ticket, n CardNames, link string) *Card {
	c := &Card{Title: fmt.Sprintf("#%d %s", t.ID, t.Subject), URL: link}
	status := n.Status
	if status == "" {
		status = statusName(nil, t.Status)
	}
	agent := n.Agent
	if agent == "" {
		agent = "unassigned"
	}
	group := n.Group
	if group == "" {
		group = "none"
	}
	requester := fmt.Sprintf("requester #%d", t.RequesterID)
	if t.Requester != nil {
		requester = t.Requester.Name
		if t.Requester.Email != "" {
			requester += " <" + t.Requester.Email + ">"
		}
	}
	c.Fields = []Field{
		{"Status", status},
		{"Priority", priorityName(t.Priority)},
		{"Requester", requester},
		{"Agent", agent},
		{"Group", group},
		{"Due", formatTime(t.DueBy)},
		{"First response due", formatTime(t.FrDueBy)},
	}
	// Slack shows at most ten fields: these three fit beside the seven.
	if t.Type != "" {
		c.Fields = append(c.Fields, Field{"Type", t.Type})
	}
	if cat := category(t); cat != "" {
		c.Fields = append(c.Fields, Field{"Category", cat})
	}
	if len(t.Tags) > 0 {
		c.Fields = append(c.Fields, Field{"Tags", strings.Join(t.Tags, ", ")})
	}
	if d := descriptionText(t); d != "" {
		c.Lines = append(c.Lines, "description: "+truncate(d, maxDescription))
	}
	convs := t.Conversations
	if len(convs) > lastConversations {
		convs = convs[len(convs)-lastConversations:]
	}
	for _, cv := range convs {
		kind := "reply"
		switch {
		case cv.Private:
			kind = "private note"
		case cv.Source == sdclient.ConversationSourceNote:
			kind = "public note"
		case cv.Incoming:
			kind = "from requester"
		}
		body := strings.Join(strings.Fields(cv.BodyText), " ")
		c.Lines = append(c.Lines, fmt.Sprintf("%s · %s: %s", cv.CreatedAt.UTC().Format("2006-01-02 15:04"), kind, truncate(body, 200)))
	}
	c.Notes = []string{fmt.Sprintf("created %s · updated %s", t.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), t.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC"))}
	return c
}

// maxDescription is how much of a ticket's description a card shows, in
// characters: a few lines; the link opens the rest.
const maxDescription = 300

// descriptionText is the ticket's description as one line of plain text:
// the desk's description_text, else its HTML description without tags.
func descriptionText(t *sdclient.Ticket) string {
	d := t.DescriptionText
	if strings.TrimSpace(d) == "" && t.Description != "" {
		d = html.UnescapeString(htmlTag.ReplaceAllString(strings.NewReplacer("<br>", "\n", "</p>", "\n", "</div>", "\n").Replace(t.Description), " "))
	}
	return strings.Join(strings.Fields(d), " ")
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// category is "Hardware › Printer › Toner" from the ticket's category,
// sub-category and item category; "" when it has none.
func category(t *sdclient.Ticket) string {
	var parts []string
	for _, p := range []*string{t.Category, t.SubCategory, t.ItemCategory} {
		if p == nil || strings.TrimSpace(*p) == "" {
			break
		}
		parts = append(parts, strings.TrimSpace(*p))
	}
	return strings.Join(parts, " › ")
}

func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// ticketButtons are the buttons under a ticket; alerts add Acknowledge.
// A resolved or closed ticket gets none.
func ticketButtons(t *sdclient.Ticket, alert bool) []Button {
	if !sdclient.IsOpenStatus(t.Status) {
		return nil
	}
	v := fmt.Sprint(t.ID)
	b := []Button{{ActionID: ActionAssignMe, Label: "Assign to me", Value: v, Style: "primary"}}
	if alert {
		b = append(b, Button{ActionID: ActionAcknowledge, Label: "Acknowledge", Value: v})
	}
	b = append(b, Button{ActionID: ActionResolve, Label: "Resolve", Value: v})
	if !alert {
		b = append(b, Button{ActionID: ActionClose, Label: "Close", Value: v, Style: "danger"})
	}
	return b
}

// Text renders the card as plain text (console).
func (c *Card) Text() string {
	var b strings.Builder
	if c.Headline != "" {
		b.WriteString(c.Headline + "\n")
	}
	b.WriteString(c.Title)
	if c.URL != "" {
		b.WriteString(" <" + c.URL + ">")
	}
	b.WriteString("\n")
	for _, f := range c.Fields {
		fmt.Fprintf(&b, "  %-19s %s\n", f.Label+":", f.Value)
	}
	for _, l := range c.Lines {
		b.WriteString("  • " + l + "\n")
	}
	for _, n := range c.Notes {
		b.WriteString("  (" + n + ")\n")
	}
	if len(c.Buttons) > 0 {
		var s []string
		for _, bt := range c.Buttons {
			s = append(s, "["+bt.Label+"]")
		}
		b.WriteString("  " + strings.Join(s, " ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// alertButtonValue packs what a click needs: ticket id, rule and key.
func alertButtonValue(id int64, rule, key string) string {
	return fmt.Sprintf("%d|%s|%s", id, rule, key)
}

// SplitButtonValue unpacks the Value of a Button: the ticket id, and for
// the buttons of an alert or page card its rule and key. A plain ticket
// card's value is just the id.
func SplitButtonValue(v string) (id, rule, key string) {
	id, rest, _ := strings.Cut(v, "|")
	rule, key, _ = strings.Cut(rest, "|")
	return id, rule, key
}
