package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// overBudget is what the last cycle of a rule that went over its run-time
// budget left for /readyz.
type overBudget struct {
	tickets int
	example int64 // one ticket it happened on
	err     string
	at      time.Time
}

// budgets remembers the rules over their run-time budget.
type budgets struct {
	mu    sync.Mutex
	rules map[string]overBudget
}

// noteBudgets counts, logs (once a rule and cycle, not once a ticket) and
// remembers the decisions of cy's rules that went over their run-time
// budget (rules.ErrBudget); the other rules are unaffected. A due rule
// that stayed within its budget this cycle is forgotten.
func (s *Scheduler) noteBudgets(cy *cycle, decisions []rules.Decision) {
	over := map[string]overBudget{}
	for _, d := range decisions {
		if d.Err == nil || !errors.Is(d.Err, rules.ErrBudget) {
			continue
		}
		o := over[d.Rule]
		if o.tickets == 0 {
			o.example, o.err, o.at = d.TicketID, d.Err.Error(), cy.now
		}
		o.tickets++
		over[d.Rule] = o
	}
	s.budgets.mu.Lock()
	defer s.budgets.mu.Unlock()
	if s.budgets.rules == nil {
		s.budgets.rules = map[string]overBudget{}
	}
	for _, r := range cy.rules {
		o, ok := over[r.Name]
		if !ok {
			delete(s.budgets.rules, r.Name)
			continue
		}
		s.budgets.rules[r.Name] = o
		s.m.overBudget.WithLabelValues(r.Name).Add(float64(o.tickets))
		cy.log.Error("rule went over its run-time budget; it does not act on those tickets, the other rules run on",
			slog.String("rule", r.Name), slog.Int("tickets", o.tickets), slog.Int64("example_ticket", o.example),
			slog.String("error", o.err))
	}
}

// RuleHealth is the rules' part of /readyz: nil, or which rules went over
// their run-time budget in their last cycle (they are reported, not
// stopped: the other rules keep running).
func (s *Scheduler) RuleHealth(context.Context) error {
	s.budgets.mu.Lock()
	defer s.budgets.mu.Unlock()
	if len(s.budgets.rules) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.budgets.rules))
	for n := range s.budgets.rules {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		o := s.budgets.rules[n]
		parts[i] = fmt.Sprintf("rule %q went over its run-time budget on %d tickets (e.g. #%d) at %s", n, o.tickets, o.example, o.at.UTC().Format(time.TimeOnly))
	}
	return errors.New(strings.Join(parts, "; "))
}
