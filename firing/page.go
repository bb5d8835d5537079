package firing

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// PageSpec is the page a page action of firing f starts: keyed by rule,
// ticket and episode, so a resumed or repeated firing of the same episode
// finds the page already started.
func PageSpec(r *rules.Rule, f rules.Firing, ticketID int64, a rules.Action) oncall.PageSpec {
	return oncall.PageSpec{Rule: r.Name, TicketID: ticketID, Episode: f.Episode, Policy: a.Policy, Channel: a.Channel, Text: a.Text,
		GroupOver: plan.GroupOver(r)}
}

// StartPage performs a page action of rule r in firing f on ticketID. The page is durable once created: a
// failure of its first step is retried by the escalator's ticks, so the
// action counts as done. When the cycle pages more tickets of r than its
// group_over, the page is started without its first step, which the tick
// after the cycle takes with the others (one direct message per person):
// grouped says so, and deferred that the page waits for that tick.
func StartPage(ctx context.Context, d *Deps, log *slog.Logger, r *rules.Rule, f rules.Firing, ticketID int64, a rules.Action, grouped bool) (deferred bool, err error) {
	if d.Pages == nil {
		return false, fmt.Errorf("page %s: %w: no on-call escalator configured", a.Policy, ErrNotDelivered)
	}
	spec := PageSpec(r, f, ticketID, a)
	spec.Defer = grouped
	p, created, err := d.Pages.Start(ctx, spec, d.Now())
	log = log.With(slog.String("rule", r.Name), slog.Int64("ticket", ticketID))
	switch {
	case err != nil && !created:
		return false, fmt.Errorf("page %s: %w", a.Policy, err)
	case err != nil:
		log.Warn("on-call page started, but its first step failed; the escalator retries it",
			slog.String("page", p.Key), slog.Any("error", err))
	case !created:
		log.Info("on-call page already started for this episode; not paging again", slog.String("page", p.Key))
		d.Metrics.Pages.WithLabelValues(r.Name, "existing").Inc()
		return false, nil
	}
	d.Metrics.Pages.WithLabelValues(r.Name, "started").Inc()
	return spec.Defer, nil
}
