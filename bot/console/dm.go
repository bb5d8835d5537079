package console

import (
	"context"
	"fmt"

	"github.com/deskbot/deskbot/bot/chat"
)

var _ chat.DMNotifier = (*Console)(nil)

// DM prints a rule's direct message: "DM alice@example.com: ..." when it
// has someone to go to, else as the fallback channel would show it.
func (c *Console) DM(_ context.Context, m chat.DMMessage) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("print direct message: %w", err)
	}
	line := fmt.Sprintf("DM %s: %s", m.To, m.Text)
	if m.To == "" {
		line = fmt.Sprintf("ALERT %s: %s", m.Channel, m.FallbackText(m.Why))
	}
	line += fmt.Sprintf(" — ticket #%d", m.Ticket.ID)
	if l, ok := c.router.(ticketLinker); ok {
		if u := l.TicketLink(m.Ticket.ID); u != "" {
			line += " <" + u + ">"
		}
	}
	line += " (rule " + m.Rule + ")"
	c.mu.Lock()
	c.alerts["dm\x00"+m.Key] = true
	c.mu.Unlock()
	c.printf("%s\n", line)
	return nil
}

// AlreadyDMed reports whether this console printed the direct message.
func (c *Console) AlreadyDMed(_ context.Context, m chat.DMMessage) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alerts["dm\x00"+m.Key], nil
}

// ticketLinker is implemented by a Router that links tickets (bot.Router).
type ticketLinker interface{ TicketLink(id int64) string }
