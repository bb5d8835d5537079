package firing

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/prometheus/client_golang/prometheus"
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

// Escalator is what pages started by rules need of on-call escalation
// (*oncall.Escalator implements it): starting a page for a rule's page
// action, taking due escalation steps, and the reloaded policies.
type Escalator interface {
	// Start begins paging for spec at now; a page with the same key (rule,
	// ticket, episode) is never started twice (created is false then).
	Start(ctx context.Context, spec oncall.PageSpec, now time.Time) (p oncall.Page, created bool, err error)
	// Tick takes every escalation step due at now, each exactly once
	// across replicas.
	Tick(ctx context.Context, now time.Time) (oncall.TickStats, error)
	// SetConfig replaces the schedules and policies (a reloaded rules file).
	SetConfig(c *oncall.Config)
}

// CheckPages refuses a rules set with page actions when there is no
// escalator to start the pages.
func CheckPages(set *rules.Set, esc Escalator) error {
	if esc != nil {
		return nil
	}
	for _, r := range set.Rules() {
		for _, k := range r.ActionKinds() {
			if k == rules.ActionPage {
				return fmt.Errorf("rule %q pages on-call, but no escalator is configured", r.Name)
			}
		}
	}
	return nil
}

// Paging is Deps.Pages over an Escalator: it starts the rules' pages and
// takes the escalation steps due, one tick at a time.
type Paging struct {
	Escalator Escalator
	Now       func() time.Time
	// Timeout bounds a tick, on a context of its own: like a firing's
	// actions, a step under way is not cut in half by a shutdown.
	Timeout time.Duration
	Ticks   prometheus.Counter // the ticks taken
	Log     *slog.Logger
	busy    sync.Mutex // held while a tick runs
}

var _ Pages = (*Paging)(nil)

// Start starts the page spec names at now.
func (p *Paging) Start(ctx context.Context, spec oncall.PageSpec, now time.Time) (oncall.Page, bool, error) {
	return p.Escalator.Start(ctx, spec, now)
}

// Tick takes the escalation steps due now (see TickNow).
func (p *Paging) Tick(ctx context.Context) error {
	_, err := p.TickNow(ctx)
	return err
}

// TickNow takes the escalation steps due now, unless a tick is under way
// (then it does nothing); steps are claimed atomically in the store, so
// a replica ticking at the same time would page nobody twice either.
func (p *Paging) TickNow(ctx context.Context) (oncall.TickStats, error) {
	if !p.busy.TryLock() {
		return oncall.TickStats{}, nil // the previous tick is still running
	}
	defer p.busy.Unlock()
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Timeout)
	defer cancel()
	st, err := p.Escalator.Tick(tctx, p.Now())
	p.Ticks.Inc()
	if err != nil {
		p.Log.Warn("on-call tick had errors; due steps are retried", slog.Any("error", err),
			slog.Int("paged", st.Paged), slog.Int("failed", st.Failed))
	} else if st.Paged+st.Failed+st.Exhausted+st.Noted > 0 {
		p.Log.Info("on-call tick", slog.Int("due", st.Due), slog.Int("paged", st.Paged), slog.Int("failed", st.Failed),
			slog.Int("exhausted", st.Exhausted), slog.Int("noted", st.Noted), slog.Int("lost", st.Lost))
	}
	return st, err
}
