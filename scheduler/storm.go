package scheduler

import (
	"log/slog"
	"sync"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// Storm control's caps and groups are plan's (plan/storm.go), its grouped
// alerts and pages firing's (firing/groups.go). What stays here: the
// decisions each rule's last cycle held back, for the explainer
// (HeldBack) and the status pages, and the plan's metrics and log lines.

// heldBack remembers, per rule, the decisions its last cycle held back.
type heldBack struct {
	mu    sync.Mutex
	rules map[string]map[int64]plan.Held
}

// HeldBack reports whether the last cycle that ran key's rule held the
// decision on key's ticket back by a per-cycle cap (for the explainer:
// see ExplainHeldBack). It is safe to call while cycles run.
func (s *Scheduler) HeldBack(key rules.FiringKey) (plan.Held, bool) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	h, ok := s.held.rules[key.Rule][key.TicketID]
	return h, ok
}

// noteHeld replaces what is remembered of the cycle's rules by what the
// cycle held back.
func (s *Scheduler) noteHeld(due []*rules.Rule, held map[string]map[int64]plan.Held) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	if s.held.rules == nil {
		s.held.rules = map[string]map[int64]plan.Held{}
	}
	for _, r := range due {
		if len(held[r.Name]) == 0 {
			delete(s.held.rules, r.Name)
			continue
		}
		s.held.rules[r.Name] = held[r.Name]
	}
}

// notePlan counts and logs what planning decided: failed decisions, those
// already fired, those the caps held back.
func (s *Scheduler) notePlan(cy *cycle, p *plan.Plan) {
	for _, d := range p.Failed {
		s.noteFailed(cy, d)
	}
	for _, d := range p.Fired {
		s.m.decisions.WithLabelValues(d.Rule, "already_fired").Inc()
	}
	for name, held := range p.Held {
		n := float64(len(held))
		s.m.decisions.WithLabelValues(name, "deferred").Add(n)
		s.m.deferredByCap.WithLabelValues(name).Add(n)
		cy.log.Info("per-cycle cap reached: the rest of the rule's firings wait for the next cycles",
			slog.String("rule", name), slog.Int("firing", p.PerRule[name]), slog.Int("held_back", len(held)),
			slog.Int("rule_cap", plan.RuleCap(cy.set.Rule(name))), slog.Int("cycle_cap", s.cfg.maxFirings))
	}
}
