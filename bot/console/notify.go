package console

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/oncall"
)

// Alert prints the alert as a text card.
func (c *Console) Alert(ctx context.Context, m chat.AlertMessage) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("print alert: %w", err)
	}
	card := c.router.AlertCard(ctx, m)
	card.Headline = fmt.Sprintf("ALERT %s: %s", m.Channel, m.Text)
	if m.Mention != "" {
		card.Headline += " (" + m.Mention + ")"
	}
	card.Notes = append(card.Notes, fmt.Sprintf("rule %s · act with /assign %d me, /ticket resolve %d", m.Rule, m.Ticket.ID, m.Ticket.ID))
	c.mu.Lock()
	c.alerts[m.Channel+"\x00"+m.Key] = true
	c.mu.Unlock()
	c.printf("%s\n", c.cardText(card))
	return nil
}

// AlertGroup prints the alerts of g as one text message naming every
// ticket, and remembers each alert's key.
func (c *Console) AlertGroup(_ context.Context, g chat.AlertGroupMessage) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("print alert group: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ALERT %s: rule %s, %d tickets in one message", g.Channel, g.Rule, len(g.Alerts))
	var mentions []string
	for _, a := range g.Alerts {
		if a.Mention != "" && !slices.Contains(mentions, a.Mention) {
			mentions = append(mentions, a.Mention)
		}
	}
	if len(mentions) > 0 {
		b.WriteString(" (" + strings.Join(mentions, " ") + ")")
	}
	b.WriteString(":\n")
	for _, a := range g.Alerts {
		b.WriteString("  " + consoleGroupLine(a) + "\n")
	}
	b.WriteString("  act with /ticket show N, /assign N me, /ticket resolve N\n")
	c.mu.Lock()
	for _, a := range g.Alerts {
		c.alerts[g.Channel+"\x00"+a.Key] = true
	}
	c.mu.Unlock()
	c.printf("%s", b.String())
	return nil
}

// consoleGroupLine is one ticket's line of a grouped alert: the rule's
// text when it names the ticket's number and subject, else the number,
// the subject and the text.
func consoleGroupLine(a chat.AlertMessage) string {
	text := strings.Join(strings.Fields(a.Text), " ")
	if chat.TicketNumberAt(text, a.Ticket.ID) >= 0 && strings.Contains(text, a.Ticket.Subject) {
		return text
	}
	line := fmt.Sprintf("#%d %s", a.Ticket.ID, a.Ticket.Subject)
	if text != "" {
		line += " — " + text
	}
	return line
}

// Page implements oncall.Pager: it prints the page; acknowledge it with
// /oncall ack N.
func (c *Console) Page(_ context.Context, r oncall.PageRequest) error {
	what := "paged"
	if r.Retry {
		what = fmt.Sprintf("paged again (attempt %d)", r.Attempt)
	}
	text := fmt.Sprintf("PAGE %s: %s %s (level %d of %s%s): %s\n  (ticket #%d · acknowledge with /oncall ack %d)\n",
		r.Channel, what, r.Target, r.Level+1, r.Page.Policy, chat.RoundSuffix(r.Round), r.Text, r.TicketID, r.TicketID)
	if line := c.numbered(chat.PageButtons(r.Page)); line != "" {
		text += line + "\n"
	}
	c.printf("%s", text)
	return nil
}

var _ oncall.StopNotifier = (*Console)(nil)

// PageStopped implements oncall.StopNotifier: it prints why a page stopped
// without anyone acknowledging it.
func (c *Console) PageStopped(_ context.Context, p oncall.Page) error {
	why := "nobody acknowledged; " + chat.WhyExhausted(p)
	if p.Resolved() {
		why = "the ticket was resolved"
	}
	c.printf("PAGE STOPPED %s (ticket #%d): %s\n", p.Key, p.TicketID, why)
	return nil
}

// AlreadyAlerted reports whether this console printed the alert.
func (c *Console) AlreadyAlerted(_ context.Context, channel, key string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alerts[channel+"\x00"+key], nil
}

// PostDryRun prints what a dry-run cycle would have done.
func (c *Console) PostDryRun(_ context.Context, channel, text string) error {
	c.printf("DRY RUN %s: %s\n", channel, text)
	return nil
}
