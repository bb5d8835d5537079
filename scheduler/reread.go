package scheduler

import (
	"context"
	"log/slog"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/sdclient"
)

// rereadSource is the desk and the mirror as a cycle's re-reads see them
// (firing.Source): each read counted, the mirror kept current, an unknown
// open status noticed.
type rereadSource struct {
	s  *Scheduler
	cy *cycle
}

var _ firing.Source = rereadSource{}

func (r rereadSource) GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	t, resp, err := r.cy.desk.GetTicket(ctx, id)
	r.s.count(r.cy, resp, err)
	return t, err
}

func (r rereadSource) Observe(t *sdclient.Ticket) {
	r.s.observe(t)
	if r.s.statuses.notice(t) {
		r.cy.log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", t.ID), slog.Int("status", t.Status))
	}
}

func (r rereadSource) Forget(id int64) { r.s.forget(id) }

// reread is ticket id re-read through the cycle's re-reads.
func (s *Scheduler) reread(ctx context.Context, cy *cycle, reads *firing.Rereads, id int64) (*sdclient.Ticket, error) {
	return reads.Get(ctx, rereadSource{s, cy}, id)
}
