package scheduler

import (
	"context"
	"log/slog"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/sdclient"
)

// rereadSource is the desk and the mirror as a cycle's re-reads see them
// (firing.Source): each read counted, an unknown open status noticed, the
// mirror kept current.
type rereadSource struct {
	s  *Scheduler
	cy *cycle
}

var _ firing.Source = rereadSource{}

func (r rereadSource) GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	t, resp, err := r.cy.desk.GetTicket(ctx, id)
	r.s.count(r.cy, resp, err)
	if err == nil && t != nil && !t.Deleted && r.s.feed.NoticeStatus(t) {
		r.cy.log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", id), slog.Int("status", t.Status))
	}
	return t, err
}

func (r rereadSource) Observe(t *sdclient.Ticket) { r.s.observe(t) }

func (r rereadSource) Forget(id int64) { r.s.forget(id) }
