package oncall

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
)

// clientDesk fits a desk client to Desk.
type clientDesk struct {
	c *sdclient.Client
}

var _ Desk = clientDesk{}

// ClientDesk returns the Desk of the escalator over a desk client: the
// private note that records who acknowledged a page, and the check that
// stops paging for a ticket resolved, closed or deleted meanwhile. It
// sends through the client's interactive twin: a person is waiting on
// both.
func ClientDesk(c *sdclient.Client) Desk { return clientDesk{c: c.Interactive()} }

// AddNote implements Desk with a private note (as the API key's agent).
// The note is HTML: body is escaped, its line breaks kept.
func (d clientDesk) AddNote(ctx context.Context, ticketID int64, body string) error {
	text := strings.ReplaceAll(html.EscapeString(body), "\n", "<br>")
	_, _, err := d.c.Conversations.Note(ctx, ticketID, &sdclient.NoteRequest{Body: text, Private: true})
	if err != nil {
		return fmt.Errorf("add note to ticket %d: %w", ticketID, err)
	}
	return nil
}

// PersonName implements Desk: the desk agent's name for an agent's
// e-mail; "" for anyone else or when the desk cannot say.
func (d clientDesk) PersonName(ctx context.Context, who string) string {
	if !strings.Contains(who, "@") {
		return ""
	}
	a, _, err := d.c.Agents.GetByEmail(ctx, who)
	if err != nil || a == nil {
		return ""
	}
	return a.Name()
}

// TicketClosed implements Desk: resolved (4), closed (5), deleted or gone
// tickets page nobody.
func (d clientDesk) TicketClosed(ctx context.Context, ticketID int64) (bool, error) {
	t, _, err := d.c.Tickets.Get(ctx, ticketID)
	switch {
	case errors.Is(err, sdclient.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get ticket %d: %w", ticketID, err)
	}
	return t.Deleted || !sdclient.IsOpenStatus(t.Status), nil
}
