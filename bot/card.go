package bot

import (
	"cmp"
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
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
	requester := fmt.Sprintf("requester #%d", t.RequesterID)
	if t.Requester != nil {
		requester = t.Requester.Name
		if t.Requester.Email != "" {
			requester += " <" + t.Requester.Email + ">"
		}
	}
	c.Fields = []chat.Field{
		{Label: "Status", Value: cmp.Or(n.Status, statusName(nil, t.Status))},
		{Label: "Priority", Value: priorityName(t.Priority)},
		{Label: "Requester", Value: requester},
		{Label: "Agent", Value: cmp.Or(n.Agent, "unassigned")},
		{Label: "Group", Value: cmp.Or(n.Group, "none")},
		{Label: "Due", Value: formatTime(t.DueBy)},
		{Label: "First response due", Value: formatTime(t.FrDueBy)},
	}
	// Slack shows at most ten fields: these three fit beside the seven.
	if t.Type != "" {
		c.Fields = append(c.Fields, chat.Field{Label: "Type", Value: t.Type})
	}
	if cat := category(t); cat != "" {
		c.Fields = append(c.Fields, chat.Field{Label: "Category", Value: cat})
	}
	if len(t.Tags) > 0 {
		c.Fields = append(c.Fields, chat.Field{Label: "Tags", Value: strings.Join(t.Tags, ", ")})
	}
	if d := descriptionText(t); d != "" {
		c.Lines = append(c.Lines, "description: "+chat.Truncate(d, maxDescription))
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
		body := strings.Join(strings.Fields(chat.StripMarks(cv.BodyText)), " ")
		c.Lines = append(c.Lines, fmt.Sprintf("%s · %s: %s", cv.CreatedAt.UTC().Format("2006-01-02 15:04"), kind, chat.Truncate(body, 200)))
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
	return strings.Join(strings.Fields(chat.StripMarks(d)), " ")
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

// TicketButtons are the buttons under a ticket; alerts add Acknowledge.
// A resolved or closed ticket gets none.
func TicketButtons(t *sdclient.Ticket, alert bool) []chat.Button {
	if !sdclient.IsOpenStatus(t.Status) {
		return nil
	}
	v := fmt.Sprint(t.ID)
	b := []chat.Button{{ActionID: chat.ActionAssignMe, Label: "Assign to me", Value: v, Style: "primary"}}
	if alert {
		b = append(b, chat.Button{ActionID: chat.ActionAcknowledge, Label: "Acknowledge", Value: v})
	}
	b = append(b, chat.Button{ActionID: chat.ActionResolve, Label: "Resolve", Value: v})
	if !alert {
		b = append(b, chat.Button{ActionID: chat.ActionClose, Label: "Close", Value: v, Style: "danger"})
	}
	return b
}
