package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/firing"
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

// MatchedSince is when ticket id began to match rule, as this process's
// evaluations saw it (plan.MatchMemory.Since).
func (s *Scheduler) MatchedSince(rule string, id int64, at time.Time) time.Time {
	return s.matches.Since(rule, id, at)
}

// noteMatches records the decisions of cy's rules for the status pages.
func (s *Scheduler) noteMatches(cy *cycle, decisions []rules.Decision) {
	s.matches.Note(cy.rules, decisions, cy.now)
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
	v.Held = s.held.Tickets()
	v.Matches = s.matches.Matches(v.Set)
	v.OverBudget = s.budgets.Over()
	return v, nil
}

// PlanOutlook is what `deskbot rules plan` shows, from this process's
// memory and the ledger (firing.PlanOutlook): a rule not evaluated yet in
// this process matches nothing in it.
func (s *Scheduler) PlanOutlook(ctx context.Context) (plan.Outlook, error) {
	now := s.cfg.clock.Now()
	s.mu.Lock()
	set := s.set
	s.mu.Unlock()
	if set == nil {
		return plan.Outlook{At: now, Tick: s.tickEvery(), CycleCap: s.cfg.maxFirings}, nil
	}
	runs, err := s.runs.RuleRuns(ctx)
	if err != nil {
		return plan.Outlook{}, fmt.Errorf("plan outlook: %w", err)
	}
	return firing.PlanOutlook(ctx, firing.OutlookInput{Set: set, Now: now, Tick: s.tickEvery(), CycleCap: s.cfg.maxFirings,
		Runs: runs, Decisions: s.matches.Decisions(set), Ledger: s.ledger,
		WaitingSince: func(fires []rules.Decision) map[rules.FiringKey]time.Time { return s.waiting.Since(fires, nil) }})
}
