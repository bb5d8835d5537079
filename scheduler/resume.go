package scheduler

import (
	"context"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// updateHolds reports whether every value an update action sets already
// holds on t: a resumed firing counts such an update as done instead of
// sending it again over a change somebody made since.
func (s *Scheduler) updateHolds(ctx context.Context, ex *execution, t *sdclient.Ticket, a rules.Action) (bool, error) {
	u, err := s.resolveUpdate(ctx, ex, a)
	if err != nil {
		return false, err
	}
	return firing.UpdateHolds(&u, t), nil
}

// resolveUpdate is the update an action sends: its set: values, and the
// agent of its assign: e-mail (looked up once per cycle).
func (s *Scheduler) resolveUpdate(ctx context.Context, ex *execution, a rules.Action) (sdclient.TicketUpdate, error) {
	u := sdclient.TicketUpdate{}
	if a.Update != nil {
		u = *a.Update
	}
	if a.AssignEmail != "" {
		id, err := s.agentID(ctx, ex, a.AssignEmail)
		if err != nil {
			return u, err
		}
		u.ResponderID = &id
	}
	return u, nil
}
