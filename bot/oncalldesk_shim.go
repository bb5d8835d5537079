package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// This file is a shim until the issue 12 merge: the on-call adapter belongs
// to its consumer, oncall (H2 moves it there). cmd/deskbot still calls
// NewOnCallDesk; the lead deletes this file when cmd uses oncall's adapter.

// OnCallDesk fits a desk client to oncall.Desk: the private note that
// records who acknowledged a page, and the check that stops paging for a
// ticket resolved, closed or deleted meanwhile. It sends through the
// client's interactive twin: a person is waiting on both.
// It is a shim until the issue 12 merge (see the top of this file).
type OnCallDesk struct {
	c *sdclient.Client
}

var _ oncall.Desk = (*OnCallDesk)(nil)

// NewOnCallDesk wraps a desk client for the escalator.
// It is a shim until the issue 12 merge (see the top of this file).
func NewOnCallDesk(c *sdclient.Client) *OnCallDesk { return &OnCallDesk{c: c.Interactive()} }

// AddNote implements oncall.Desk with a private note (as the API key's agent).
func (d *OnCallDesk) AddNote(ctx context.Context, ticketID int64, body string) error {
	_, _, err := d.c.Conversations.Note(ctx, ticketID, &sdclient.NoteRequest{Body: htmlText(body), Private: true})
	if err != nil {
		return fmt.Errorf("add note to ticket %d: %w", ticketID, err)
	}
	return nil
}

// TicketClosed implements oncall.Desk: resolved (4), closed (5), deleted
// or gone tickets page nobody.
func (d *OnCallDesk) TicketClosed(ctx context.Context, ticketID int64) (bool, error) {
	t, _, err := d.c.Tickets.Get(ctx, ticketID)
	switch {
	case errors.Is(err, sdclient.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get ticket %d: %w", ticketID, err)
	}
	return t.Deleted || !sdclient.IsOpenStatus(t.Status), nil
}
