package scheduler

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// StatusView is what the status pages show of the scheduler, read from
// memory and the state store: building it never asks the desk.
type StatusView struct {
	At    time.Time  // the scheduler's clock when the view was taken
	Set   *rules.Set // the rules running now
	Ready Readiness  // the jobs, their last cycles, the mirrors
	// Tickets is how many tickets the mirrors hold (MirroredTickets
	// reads them).
	Tickets int
	// Runs is each rule's last run as stored (see plan.NextRun), by rule name.
	Runs map[string]store.RuleRun
	// Held is, per rule, how many decisions its last cycle held back (by
	// a cap or the queue), each with why.
	Held map[string][]plan.HeldTicket
	// OverBudget is, per rule, why its last cycle went over its run-time
	// budget; absent when it did not.
	OverBudget map[string]string
	// Matches is, per rule, the tickets its last evaluation matched;
	// absent for a rule not evaluated yet in this process.
	Matches map[string]plan.RuleMatches
	DryRun  bool // decisions are logged, not acted on
	Tick    time.Duration
}

// MirroredTickets returns the mirrored tickets of ids, by id (absent:
// not mirrored). They are shared with the mirror: read them, never change
// them. Looking a few up is cheaper than a snapshot of the whole mirror.
func (s *Scheduler) MirroredTickets(ids []int64) map[int64]*sdclient.Ticket {
	return s.feed.Tickets(ids)
}

// lastMatches keeps each rule's last evaluation for the status pages: the
// pages read it instead of evaluating every rule over the whole mirror
// again (a page renders in milliseconds, an evaluation of a large desk
// takes longer).
type lastMatches struct {
	mu    sync.Mutex
	rules map[string]plan.RuleMatches
}

// noteMatches records the decisions of cy's rules (plan.Matches).
func (s *Scheduler) noteMatches(cy *cycle, decisions []rules.Decision) {
	fresh := plan.Matches(cy.rules, decisions, cy.now)
	s.matches.mu.Lock()
	defer s.matches.mu.Unlock()
	if s.matches.rules == nil {
		s.matches.rules = map[string]plan.RuleMatches{}
	}
	maps.Copy(s.matches.rules, fresh)
}

// StatusView takes a view of the scheduler for the status pages. It is
// safe to call while cycles run; it makes no desk request.
func (s *Scheduler) StatusView(ctx context.Context) (StatusView, error) {
	v := StatusView{At: s.cfg.clock.Now(), Ready: s.Ready(), DryRun: s.cfg.dryRun, Tick: s.tickEvery()}
	s.mu.Lock()
	v.Set = s.set
	s.mu.Unlock()
	for _, m := range v.Ready.Mirror {
		v.Tickets += m.Tickets
	}
	runs, err := s.runs.RuleRuns(ctx)
	if err != nil {
		return v, fmt.Errorf("status view: %w", err)
	}
	v.Runs = runs
	s.held.mu.Lock()
	v.Held = plan.HeldTickets(s.held.rules)
	s.held.mu.Unlock()
	s.matches.mu.Lock()
	v.Matches = make(map[string]plan.RuleMatches, len(s.matches.rules))
	for n, m := range s.matches.rules {
		if v.Set != nil && v.Set.Rule(n) == nil {
			continue // a rule since removed by a reload
		}
		v.Matches[n] = m
	}
	s.matches.mu.Unlock()
	s.budgets.mu.Lock()
	v.OverBudget = make(map[string]string, len(s.budgets.rules))
	for n, o := range s.budgets.rules {
		v.OverBudget[n] = fmt.Sprintf("over its run-time budget on %d tickets (e.g. #%d) at %s: %s", o.tickets, o.example, o.at.UTC().Format(time.TimeOnly), o.err)
	}
	s.budgets.mu.Unlock()
	return v, nil
}
