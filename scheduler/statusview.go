package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
	Held map[string][]HeldTicket
	// OverBudget is, per rule, why its last cycle went over its run-time
	// budget; absent when it did not.
	OverBudget map[string]string
	// Matches is, per rule, the tickets its last evaluation matched;
	// absent for a rule not evaluated yet in this process.
	Matches map[string]RuleMatches
	DryRun  bool // decisions are logged, not acted on
	Tick    time.Duration
}

// MirroredTickets returns the mirrored tickets of ids, by id (absent:
// not mirrored). They are shared with the mirror: read them, never change
// them. Looking a few up is cheaper than a snapshot of the whole mirror.
func (s *Scheduler) MirroredTickets(ids []int64) map[int64]*sdclient.Ticket {
	return s.feed.Tickets(ids)
}

// RuleMatches is what a rule's last evaluation found.
type RuleMatches struct {
	At      time.Time        // the cycle's time
	Tickets []int64          // the tickets it decided to act on (query and if hold), by id
	Failed  map[int64]string // tickets it failed on, with why
}

// lastMatches keeps each rule's last evaluation for the status pages: the
// pages read it instead of evaluating every rule over the whole mirror
// again (a page renders in milliseconds, an evaluation of a large desk
// takes longer).
type lastMatches struct {
	mu    sync.Mutex
	rules map[string]RuleMatches
}

// noteMatches records the decisions of cy's rules.
func (s *Scheduler) noteMatches(cy *cycle, decisions []rules.Decision) {
	fresh := make(map[string]RuleMatches, len(cy.rules))
	for _, r := range cy.rules {
		fresh[r.Name] = RuleMatches{At: cy.now}
	}
	for _, d := range decisions {
		m, ok := fresh[d.Rule]
		if !ok {
			continue
		}
		if d.Err != nil {
			if m.Failed == nil {
				m.Failed = map[int64]string{}
			}
			m.Failed[d.TicketID] = d.Err.Error()
		} else {
			m.Tickets = append(m.Tickets, d.TicketID)
		}
		fresh[d.Rule] = m
	}
	s.matches.mu.Lock()
	defer s.matches.mu.Unlock()
	if s.matches.rules == nil {
		s.matches.rules = map[string]RuleMatches{}
	}
	for name, m := range fresh {
		slices.Sort(m.Tickets)
		s.matches.rules[name] = m
	}
}

// HeldTicket is one decision a cycle held back.
type HeldTicket struct {
	TicketID int64
	plan.Held
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
	v.Held = make(map[string][]HeldTicket, len(s.held.rules))
	for rule, byTicket := range s.held.rules {
		for id, h := range byTicket {
			v.Held[rule] = append(v.Held[rule], HeldTicket{TicketID: id, Held: h})
		}
		slices.SortFunc(v.Held[rule], func(a, b HeldTicket) int { return cmp.Compare(a.TicketID, b.TicketID) })
	}
	s.held.mu.Unlock()
	s.matches.mu.Lock()
	v.Matches = make(map[string]RuleMatches, len(s.matches.rules))
	for n, m := range s.matches.rules {
		if v.Set != nil && v.Set.Rule(n) == nil {
			continue // a rule since removed by a reload
		}
		v.Matches[n] = m
	}
	s.matches.mu.Unlock()
	v.OverBudget = s.budgets.Over()
	return v, nil
}
