package scheduler

import (
	"log/slog"

	"github.com/deskbot/deskbot/plan"
)

// Storm control's caps and groups are plan's (plan/storm.go), and so is
// the memory of what each rule's last cycle held back (plan.HeldMemory);
// its grouped alerts and pages are firing's (firing/groups.go), and the
// explainer reads the memory through Memory. What stays here: the plan's
// metrics and log lines.

// notePlan counts and logs what planning decided: failed decisions, those
// already fired, those the caps held back.
func (s *Scheduler) notePlan(cy *cycle, p *plan.Plan) {
	for _, d := range p.Failed {
		s.noteFailed(cy, d)
	}
	for _, d := range p.Fired {
		s.m.exec.Decisions.WithLabelValues(d.Rule, "already_fired").Inc()
	}
	for name, held := range p.Held {
		n := float64(len(held))
		s.m.exec.Decisions.WithLabelValues(name, "deferred").Add(n)
		s.m.deferredByCap.WithLabelValues(name).Add(n)
		cy.log.Info("per-cycle cap reached: the rest of the rule's firings wait for the next cycles",
			slog.String("rule", name), slog.Int("firing", p.PerRule[name]), slog.Int("held_back", len(held)),
			slog.Int("rule_cap", plan.RuleCap(cy.set.Rule(name))), slog.Int("cycle_cap", s.cfg.maxFirings))
	}
}
