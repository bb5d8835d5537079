package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
)

// RequesterByEmail implements Desk (GET /requesters?email=):
// sdclient.ErrNotFound when the desk has no requester with that e-mail.
func (a *DeskAdapter) RequesterByEmail(ctx context.Context, email string) (*sdclient.TicketRequester, error) {
	rs, _, err := a.c.Requesters.List(ctx, &sdclient.RequesterListOptions{Email: email})
	if errors.Is(err, sdclient.ErrInvalidInput) {
		return nil, fmt.Errorf("%w: %w", sdclient.ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("requester %s: %w", email, sdclient.ErrNotFound)
	}
	rq := rs[0]
	out := &sdclient.TicketRequester{ID: rq.ID, Name: rq.FirstName, Email: email}
	if rq.LastName != nil {
		out.Name = strings.TrimSpace(out.Name + " " + *rq.LastName)
	}
	return out, nil
}

// RequesterByEmail costs one request when the desk can find requesters.
func (d *meteredDesk) RequesterByEmail(ctx context.Context, email string) (*sdclient.TicketRequester, error) {
	rq, err := d.Desk.RequesterByEmail(ctx, email)
	d.spendAsked(ctx, err)
	return rq, err
}
