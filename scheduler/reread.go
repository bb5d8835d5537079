package scheduler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/deskbot/deskbot/sdclient"
)

// rereads are the tickets a cycle re-read from the desk, once per ticket:
// the execute step fills it before acting, and reconcile reads through it
// when it confirms an episode's end, so no ticket is read twice a cycle.
type rereads struct {
	fresh map[int64]*sdclient.Ticket // re-read tickets
	gone  map[int64]bool             // re-read said 404 (or deleted)
}

func newRereads() *rereads {
	return &rereads{fresh: map[int64]*sdclient.Ticket{}, gone: map[int64]bool{}}
}

// has reports whether ticket id was re-read (or found gone) already.
func (r *rereads) has(id int64) bool {
	_, ok := r.fresh[id]
	return ok || r.gone[id]
}

// get returns the ticket as the desk has it now (once per cycle), nil
// when it no longer exists; the mirror takes what it reads.
func (r *rereads) get(ctx context.Context, s *Scheduler, cy *cycle, id int64) (*sdclient.Ticket, error) {
	if t, ok := r.fresh[id]; ok {
		return t, nil
	}
	if r.gone[id] {
		return nil, nil
	}
	t, resp, err := cy.desk.GetTicket(ctx, id)
	s.count(cy, resp, err)
	if errors.Is(err, sdclient.ErrNotFound) || (err == nil && t != nil && t.Deleted) {
		r.gone[id] = true
		s.forget(id)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.fresh[id] = t
	s.observe(t) // the freshest view: the mirror takes it too
	if s.statuses.notice(t) {
		cy.log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", id), slog.Int("status", t.Status))
	}
	return t, nil
}
