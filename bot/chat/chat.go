package chat

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// Caller is the person who sent a Command, as the transport knows them.
type Caller struct {
	UserID    string // the caller's chat user id
	TeamID    string
	ChannelID string
	// Users resolves chat user ids (the caller, mentions) to e-mails.
	Users Directory
}

// Command is one thing a person asks of the bot, whatever the transport:
// a typed command (Slash and Text), a pressed button (Button and Value) or
// a submitted new-ticket form (Form). Exactly one of Slash, Button and
// Form is set.
type Command struct {
	Slash string // "/ticket", "/assign" or "/oncall"
	Text  string // everything after Slash
	// Button is the action id of a pressed button (an Action* constant)
	// and Value the Value of that Button, as the router put it on a card.
	Button string
	Value  string
	// Form is a submitted new-ticket form; the requester is the caller.
	Form *TicketFormValues
}

// Reply is the answer to a Command. Transports render it: Slack as Block
// Kit (ephemeral unless Public), the console as text. Every Command gets
// one: errors, refusals and panics are Replies with Failed set.
type Reply struct {
	Text string // the answer in words; also the notification fallback
	// Card is an optional rich card. After a button, it is the card the
	// button was on, redrawn with the buttons that apply now.
	Card   *Card
	Public bool // visible to the whole channel
	// Markup, when set, is Text as chat markup (Slack mrkdwn, already
	// escaped, with mentions) for transports that render it; the console
	// shows Text.
	Markup string
	// Form asks the transport to open the new-ticket form instead.
	Form *TicketForm
	// Failed marks an error answer (usage, refusal, desk error).
	Failed bool
	// Pages are on-call pages the command changed; the transport refreshes
	// their cards.
	Pages []oncall.Page
	// Ticket is, after a button, the ticket as the click left it (nil
	// when it could not be read).
	Ticket *sdclient.Ticket
	// Activity is, after a button on a ticket or alert card, a line for
	// that card ("Alice acknowledged").
	Activity string
	// Page is, after a button on a page card, the page as stored after the
	// click.
	Page *oncall.Page
	// Created is the ticket the command opened (/ticket new, the
	// new-ticket form): a transport may follow it in a thread.
	Created *sdclient.Ticket
}

// TicketForm is the new-ticket form (a Slack modal): subject, description,
// priority and group.
type TicketForm struct {
	Subject string
	Groups  []*sdclient.Group // may be empty when the desk is slow
}

// TicketFormValues is a submitted TicketForm.
type TicketFormValues struct {
	Subject     string
	Description string
	Priority    int   // 0: default
	GroupID     int64 // 0: none
}

// Directory maps a chat user id to the person's e-mail address; each
// transport provides one (Slack: users.info).
type Directory interface {
	Email(ctx context.Context, userID string) (string, error)
}

// Mentioner is implemented by the Directory of a chat that renders
// mentions (Slack): /oncall then names schedule members so that people
// see who it is at a glance. Its result is chat markup, already escaped.
type Mentioner interface {
	MentionMember(ctx context.Context, member string) string
}

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

// ButtonValue packs what a click on an alert or page card needs: ticket
// id, rule and key (see SplitButtonValue).
func ButtonValue(id int64, rule, key string) string {
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

// AlertMessage is one alert of a rule, to be posted as a card with the
// buttons Assign to me, Acknowledge and Resolve.
type AlertMessage struct {
	Channel string // channel id or #name
	Text    string // the rule's rendered text
	Mention string // a Slack user (<@U..>, U.., e-mail), user group (<!subteam^S..>, S.., @handle), @here/@channel/@everyone, or empty
	Ticket  *sdclient.Ticket
	Rule    string // rule name
	Key     string // unique per firing; AlreadyAlerted looks for it
}

// Notifier posts alerts and tells whether one was already posted (so that a
// firing resumed after a crash does not post twice). Slack and Console
// implement it.
type Notifier interface {
	Alert(ctx context.Context, m AlertMessage) error
	// AlertGroup posts one message naming every ticket of g, which carries
	// the key of each of its alerts: AlreadyAlerted finds each of them.
	AlertGroup(ctx context.Context, g AlertGroupMessage) error
	AlreadyAlerted(ctx context.Context, channel, key string) (bool, error)
}

// AlertGroupMessage is the alerts one rule made about many tickets in one
// poll (more than its group_over), posted as one message instead of a card
// each.
type AlertGroupMessage struct {
	Channel string // channel id or #name, the same for every alert
	Rule    string
	Alerts  []AlertMessage // in ticket order; each keeps its Key, Text, Mention and Ticket
}

// Check refuses a group without alerts or channel, or with an alert that
// fails AlertMessage.Check.
func (g AlertGroupMessage) Check() error {
	if len(g.Alerts) == 0 {
		return errors.New("alert group has no alerts")
	}
	if g.Channel == "" {
		return errors.New("alert group has no channel")
	}
	for _, a := range g.Alerts {
		if err := a.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Check refuses an alert without ticket, channel or key.
func (m AlertMessage) Check() error {
	return checkOnTicket("alert", m.Ticket, [2]string{m.Channel, "channel"}, [2]string{m.Key, "key"})
}

// checkOnTicket refuses a message on a ticket (what names it in the
// error: "alert", "direct message") without ticket, or with one of the
// fields empty; each field is its value and its name, checked in order.
func checkOnTicket(what string, tk *sdclient.Ticket, fields ...[2]string) error {
	if tk == nil {
		return fmt.Errorf("%s has no ticket", what)
	}
	for _, f := range fields {
		if f[0] == "" {
			return fmt.Errorf("%s on ticket %d has no %s", what, tk.ID, f[1])
		}
	}
	return nil
}

// TicketNumberAt is where "#id" (not followed by a digit) starts in text,
// or -1: a grouped alert shows the rule's text alone when it names the
// ticket.
func TicketNumberAt(text string, id int64) int {
	num := "#" + strconv.FormatInt(id, 10)
	for off := 0; ; {
		i := strings.Index(text[off:], num)
		if i < 0 {
			return -1
		}
		end := off + i + len(num)
		if end == len(text) || text[end] < '0' || text[end] > '9' {
			return off + i
		}
		off = end
	}
}

// Button action ids of a page card.
const (
	ActionPageAck      = "deskbot_page_ack"
	ActionPageTake     = "deskbot_page_take"
	ActionPageEscalate = "deskbot_page_escalate"
)

// IsPageAction reports whether a button belongs to a page card.
func IsPageAction(id string) bool {
	return id == ActionPageAck || id == ActionPageTake || id == ActionPageEscalate
}

// PageButtons are the buttons of a page still escalating, each carrying
// ticket, rule and page key.
func PageButtons(p oncall.Page) []Button {
	if p.Stopped() {
		return nil
	}
	v := ButtonValue(p.TicketID, p.Rule, p.Key)
	return []Button{
		{ActionID: ActionPageAck, Label: "Acknowledge", Value: v, Style: "primary"},
		{ActionID: ActionPageTake, Label: "Take it", Value: v},
		{ActionID: ActionPageEscalate, Label: "Escalate now", Value: v, Style: "danger"},
	}
}

// WhyExhausted says why an exhausted page stopped: every level was paged,
// or, as its history says, its policy left the rules file.
func WhyExhausted(p oncall.Page) string {
	for i := len(p.History) - 1; i >= 0; i-- {
		if ev := p.History[i]; ev.Kind == oncall.EventExhausted && !strings.HasPrefix(ev.Detail, "every level") && ev.Detail != "" {
			return ev.Detail
		}
	}
	return "every level of " + p.Policy + " was paged"
}

// RoundSuffix names the round of a page past its first: ", round 2".
func RoundSuffix(round int) string {
	if round == 0 {
		return ""
	}
	return fmt.Sprintf(", round %d", round+1)
}

// MaxCommandText bounds the text of one command; Slack itself caps slash
// command text at 4,000 characters.
const MaxCommandText = 8000

// Truncate cuts s to n characters, the last one an ellipsis.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// PanicText answers a command whose handler panicked.
func PanicText(what string) string {
	return fmt.Sprintf("something went wrong running %s; it has been logged", what)
}

// Admission is one command admitted to call the desk (bot.Router.Admit):
// the transport runs it once Wait returns true, with the context from
// Charge, and calls Done when it is answered.
type Admission interface {
	// Wait blocks until the command may run; false, with the busy answer,
	// when it could not start in time.
	Wait() (bool, string)
	// Charge returns ctx counting the command's desk calls against it.
	Charge(ctx context.Context) context.Context
	// Done frees the command's place.
	Done()
}

// deskbotMark is what deskbot writes into the notes and replies it adds
// to a ticket so that it recognises them later: an HTML comment naming
// the firing (or thread message) and an invisible tag, a word joiner, a
// run of zero width spaces and non-joiners, and a word joiner. Neither is
// for people.
var deskbotMark = regexp.MustCompile(`<!--\s*deskbot:[^>]*-->|\x{2060}[\x{200b}\x{200c}]*\x{2060}`)

// StripMarks removes deskbot's own marks from a text shown to people (a
// note of a rule on a card, say); other text is left as it is, zero width
// characters of a language included.
func StripMarks(s string) string {
	if !strings.ContainsRune(s, '\u2060') && !strings.Contains(s, "deskbot:") {
		return s
	}
	return deskbotMark.ReplaceAllString(s, "")
}
