package scheduler

import (
	"context"
	"fmt"
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
	// since is, per rule, when each ticket it matches began to match: the
	// first of the consecutive evaluations that matched it. A claim
	// records it (MatchedSince) so that /firings says how long the ticket
	// waited for its firing, not only how long the firing took.
	since map[string]map[int64]time.Time
	// decisions is, per rule, its last evaluation's decisions: the plan
	// page's outlook (PlanOutlook) starts from them.
	decisions map[string][]rules.Decision
}

// MatchedSince is when ticket id began to match rule, as this process's
// evaluations saw it: the first of the consecutive cycles that matched it;
// at when none did (a firing under way, a restart).
func (s *Scheduler) MatchedSince(rule string, id int64, at time.Time) time.Time {
	s.matches.mu.Lock()
	defer s.matches.mu.Unlock()
	if t, ok := s.matches.since[rule][id]; ok && t.Before(at) {
		return t
	}
	return at
}

// noteMatches records the decisions of cy's rules (plan.Matches).
func (s *Scheduler) noteMatches(cy *cycle, decisions []rules.Decision) {
	fresh := plan.Matches(cy.rules, decisions, cy.now)
	byRule := make(map[string][]rules.Decision, len(cy.rules))
	for _, r := range cy.rules {
		byRule[r.Name] = nil
	}
	for _, d := range decisions {
		if ds, ok := byRule[d.Rule]; ok {
			byRule[d.Rule] = append(ds, d)
		}
	}
	s.matches.mu.Lock()
	defer s.matches.mu.Unlock()
	if s.matches.rules == nil {
		s.matches.rules = map[string]plan.RuleMatches{}
		s.matches.since = map[string]map[int64]time.Time{}
		s.matches.decisions = map[string][]rules.Decision{}
	}
	for name, ds := range byRule {
		s.matches.decisions[name] = ds
	}
	for name, m := range fresh {
		s.matches.rules[name] = m
		// A ticket keeps its match start while consecutive evaluations
		// match it; one that stopped matching starts afresh.
		old := s.matches.since[name]
		since := make(map[int64]time.Time, len(m.Tickets))
		for _, id := range m.Tickets {
			if t, ok := old[id]; ok {
				since[id] = t
			} else {
				since[id] = cy.now
			}
		}
		s.matches.since[name] = since
	}
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
	v.OverBudget = s.budgets.Over()
	return v, nil
}

// PlanOutlook is what `deskbot rules plan` shows, from this process's
// memory and the ledger: each rule's decisions at its last evaluation,
// less those the ledger shows fired already (as a claim would see them
// now), in the queue's order, split into cycles by the caps, each rule at
// its next run (NextRun). It neither asks the desk nor evaluates a rule:
// a rule not evaluated yet in this process matches nothing in it.
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
	next := make(map[string]time.Time, len(set.Rules()))
	s.matches.mu.Lock()
	n := 0
	for _, r := range set.Rules() {
		n += len(s.matches.decisions[r.Name])
	}
	decisions := make([]rules.Decision, 0, n)
	for _, r := range set.Rules() {
		rec, ok := runs[r.Name]
		next[r.Name] = plan.Later(plan.NextRun(r, rec, ok, now), now)
		decisions = append(decisions, s.matches.decisions[r.Name]...)
	}
	s.matches.mu.Unlock()
	// What the ledger shows fired, one read per rule.
	fired := map[rules.FiringKey]bool{}
	ids := map[string][]int64{}
	for _, d := range decisions {
		if d.Err == nil {
			ids[d.Rule] = append(ids[d.Rule], d.TicketID)
		}
	}
	for _, r := range set.Rules() {
		if len(ids[r.Name]) == 0 {
			continue
		}
		if r.Once.Mode == rules.OnceEpisode {
			// An open episode has fired (a page must stay quick at
			// thousands of matches: one column, not the records; a
			// firing left pending by a crash counts as fired here).
			open, err := s.ledger.OpenEpisodes(ctx, r.Name)
			if err != nil {
				return plan.Outlook{}, fmt.Errorf("plan outlook: %w", err)
			}
			for _, id := range open {
				fired[rules.FiringKey{Rule: r.Name, TicketID: id}] = true
			}
			continue
		}
		recs, err := s.ledger.FiringStates(ctx, r.Name, ids[r.Name])
		if err != nil {
			return plan.Outlook{}, fmt.Errorf("plan outlook: %w", err)
		}
		for id, rec := range recs {
			if !r.Once.MayFire(rec, next[r.Name]) {
				fired[rules.FiringKey{Rule: r.Name, TicketID: id}] = true
			}
		}
	}
	// The queue's order, as a cycle admits them; the fired and the failed
	// only count, so they need none.
	fires, counted := make([]rules.Decision, 0, len(decisions)), make([]rules.Decision, 0, len(decisions))
	for _, d := range decisions {
		if d.Err != nil || fired[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] {
			counted = append(counted, d)
		} else {
			fires = append(fires, d)
		}
	}
	decisions = append(plan.Order(set, now, fires, nil, s.waitingSince(fires, nil)), counted...)
	return plan.NewOutlook(now, s.tickEvery(), s.cfg.maxFirings, set, set.Rules(), decisions, next, func(d rules.Decision) bool {
		return fired[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}]
	}), nil
}
