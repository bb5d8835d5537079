package scheduler

import (
	"context"

	"github.com/deskbot/deskbot/firing"
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

// firingDeps is what the cycle's firings need of the scheduler: the
// Notifier and the DMSender as cmd/deskbot wired them, the desk, ledger
// and clock, each desk request counted in the cycle.
func (s *Scheduler) firingDeps(cy *cycle) *firing.Deps {
	d := &firing.Deps{
		Ledger: s.ledger, Desk: cy.desk, Count: s.counter(cy),
		Source: s.source(cy), Notifier: s.notifier, DMs: s.cfg.dms,
		Marks: s.marks.Get, Now: s.cfg.clock.Now, Stopping: s.stopping.Load,
		Lease: s.cfg.lease, ActionTimeout: s.cfg.actionTimeout, MatchedSince: s.matches.Since,
		Metrics: s.m.exec,
	}
	if s.paging != nil {
		d.Pages = s.paging
	}
	return d
}

// source is the desk and the mirror as cy's re-reads see them.
func (s *Scheduler) source(cy *cycle) firing.DeskSource {
	return firing.DeskSource{Desk: cy.desk, Count: s.counter(cy), Mirror: s.feed, Log: cy.log}
}

// counter counts a desk call's requests in cy and against the budget.
func (s *Scheduler) counter(cy *cycle) func(*sdclient.Response, error) {
	return func(resp *sdclient.Response, err error) { s.count(cy, resp, err) }
}

// lookupPeople fetches the names of people and groups cy's rules read
// (firing.People.Lookup), each request counted in cy.
func (s *Scheduler) lookupPeople(ctx context.Context, cy *cycle, set *rules.Set, tickets []*sdclient.Ticket) {
	s.people.Lookup(ctx, s.desk, s.counter(cy), set, tickets, cy.now, cy.log)
}
