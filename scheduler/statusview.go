package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

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
	// Tickets is every mirrored ticket, ordered by id. They are shared
	// with the mirror: read them, never change them.
	Tickets []*sdclient.Ticket
	// Runs is each rule's last run as stored (see NextRun), by rule name.
	Runs map[string]store.RuleRun
	// Held is, per rule, how many decisions its last cycle held back (by
	// a cap or the queue), each with why.
	Held map[string][]HeldTicket
	// OverBudget is, per rule, why its last cycle went over its run-time
	// budget; absent when it did not.
	OverBudget map[string]string
	DryRun     bool // decisions are logged, not acted on
	Tick       time.Duration
}

// HeldTicket is one decision a cycle held back.
type HeldTicket struct {
	TicketID int64
	Held
}

// StatusView takes a view of the scheduler for the status pages. It is
// safe to call while cycles run; it makes no desk request.
func (s *Scheduler) StatusView(ctx context.Context) (StatusView, error) {
	v := StatusView{At: s.cfg.clock.Now(), Ready: s.Ready(), DryRun: s.cfg.dryRun, Tick: s.tickEvery()}
	s.mu.Lock()
	v.Set = s.set
	s.mu.Unlock()
	for _, m := range s.mirrors {
		v.Tickets = append(v.Tickets, m.snapshot()...)
	}
	if len(s.mirrors) > 1 {
		slices.SortFunc(v.Tickets, byID)
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
	s.budgets.mu.Lock()
	v.OverBudget = make(map[string]string, len(s.budgets.rules))
	for n, o := range s.budgets.rules {
		v.OverBudget[n] = fmt.Sprintf("over its run-time budget on %d tickets (e.g. #%d) at %s: %s", o.tickets, o.example, o.at.UTC().Format(time.TimeOnly), o.err)
	}
	s.budgets.mu.Unlock()
	return v, nil
}
