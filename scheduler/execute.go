package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// outcomes is what the execute step did (firing.Execute), and the desk
// requests it spent: the planner stretches the polling, not the draining
// of a backlog, which the queue's pace bounds.
type outcomes struct {
	firing.Outcomes
	requests int
}

// execute is the execute step: firing.Execute over the plan, at the
// queue's pace q.
func (s *Scheduler) execute(ctx context.Context, cy *cycle, p *plan.Plan, q pace) outcomes {
	before := cy.requests
	out := firing.Execute(ctx, s.firingDeps(cy), firing.Cycle{Set: cy.set, Rules: cy.rules, Now: cy.now, Log: cy.log}, p,
		func(cost int) bool { return q.fits(cost) })
	return outcomes{Outcomes: out, requests: cy.requests - before}
}

// firingDeps is what the cycle's firings need of the scheduler.
func (s *Scheduler) firingDeps(cy *cycle) *firing.Deps {
	d := &firing.Deps{
		Ledger: s.ledger, Desk: cy.desk, Count: func(resp *sdclient.Response, err error) { s.count(cy, resp, err) },
		Source: rereadSource{s, cy}, Chat: chat{s.notifier}, DMs: cycleDMs{s, cy},
		Marks: s.marks, Now: s.cfg.clock.Now, Stopping: s.stopping.Load,
		Lease: s.cfg.lease, ActionTimeout: s.cfg.actionTimeout, MatchedSince: s.MatchedSince,
		Metrics: firing.Metrics{Decisions: s.m.decisions, Actions: s.m.actions, AlertGroups: s.m.alertGroups,
			Cascades: s.m.cascades, Pages: s.m.pages},
	}
	if s.cfg.escalator != nil {
		d.Pages = pages{s}
	}
	return d
}

// chat is the Notifier as firings see it (firing.Chat).
type chat struct{ n Notifier }

var (
	_ firing.Chat  = chat{}
	_ firing.DMs   = cycleDMs{}
	_ firing.Pages = pages{}
	_ firing.Desk  = Desk(nil)
)

func (c chat) Alert(ctx context.Context, rule string, a rules.Action, key string, t *sdclient.Ticket) error {
	return c.n.Alert(ctx, Alert{Channel: a.Channel, Text: a.Text, Mention: a.Mention, Rule: rule, Key: key, Ticket: t})
}

func (c chat) Groups() bool {
	_, ok := c.n.(GroupNotifier)
	return ok
}

func (c chat) AlertGroup(ctx context.Context, rule, channel string, members []firing.Member) error {
	gn, ok := c.n.(GroupNotifier)
	if !ok {
		return fmt.Errorf("alert %s: %w: the notifier posts no grouped message", channel, ErrNotDelivered)
	}
	g := AlertGroup{Channel: channel, Rule: rule, Alerts: make([]Alert, 0, len(members))}
	for _, m := range members {
		g.Alerts = append(g.Alerts, Alert{Channel: m.Action.Channel, Text: m.Action.Text, Mention: m.Action.Mention, Rule: rule,
			Key: m.Key, Ticket: m.Ticket})
	}
	return gn.AlertGroup(ctx, g)
}

func (c chat) AlreadyAlerted(ctx context.Context, channel, key string) (bool, error) {
	ck, ok := c.n.(AlertChecker)
	if !ok {
		return false, nil // cannot tell: the alert may be posted twice
	}
	return ck.AlreadyAlerted(ctx, channel, key)
}

// cycleDMs sends a cycle's direct messages (dm.go).
type cycleDMs struct {
	s  *Scheduler
	cy *cycle
}

func (d cycleDMs) SendDM(ctx context.Context, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) error {
	return d.s.sendDM(ctx, d.cy, r, t, a, marker)
}

func (d cycleDMs) AlreadyDMed(ctx context.Context, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) (bool, error) {
	return d.s.alreadyDMed(ctx, d.cy, r, t, a, marker)
}

// pages starts rules' pages with the escalator, and ticks it for the
// first steps of pages started without them.
type pages struct{ s *Scheduler }

func (p pages) Start(ctx context.Context, spec oncall.PageSpec, now time.Time) (oncall.Page, bool, error) {
	return p.s.cfg.escalator.Start(ctx, spec, now)
}

func (p pages) Tick(ctx context.Context) error {
	_, err := p.s.tickPages(ctx)
	return err
}

// actionContext bounds a write of the scheduler's own (a dry run's chat
// message) as firing bounds a firing's: a shutdown does not cut it.
func (s *Scheduler) actionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.actionTimeout)
}
