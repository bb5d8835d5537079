package scheduler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// WithOutlook makes every dry-run cycle hand its plan.Outlook to f (deskbot
// rules plan). It is called on the cycle's goroutine.
func WithOutlook(f func(plan.Outlook)) Option { return func(cfg *config) { cfg.outlook = f } }

// dryRun is the execute step of a dry run (firing.DryRun): it says what
// the cycle would have done and executes nothing. Its outcomes hold back
// what the caps would have.
func (s *Scheduler) dryRun(ctx context.Context, cy *cycle, decisions []rules.Decision) outcomes {
	for _, d := range decisions {
		if d.Err != nil {
			s.noteFailed(cy, d)
		}
	}
	var runs firing.RuleRunReader // a plan's cycle shows each rule at its next run
	if cy.once {
		runs = s.runs
	}
	held := s.dry.Run(ctx, firing.DryCycle{
		Cycle:     firing.Cycle{Set: cy.set, Rules: cy.rules, Now: cy.now, Log: cy.log},
		Decisions: decisions, Tick: s.tickEvery(), CycleCap: s.cfg.maxFirings, Complete: s.feed.Complete(),
		Runs: runs, Tickets: s.feed.Snapshot, Ledger: s.ledger, Notifier: s.notifier,
		Count:         func(rule, outcome string) { s.m.exec.Decisions.WithLabelValues(rule, outcome).Inc() },
		Outlook:       s.cfg.outlook,
		ActionTimeout: s.cfg.actionTimeout,
	})
	return outcomes{Outcomes: firing.Outcomes{Held: held, Reads: firing.NewRereads()}}
}

// noteFailed counts and logs a decision that failed.
func (s *Scheduler) noteFailed(cy *cycle, d rules.Decision) {
	s.m.exec.Decisions.WithLabelValues(d.Rule, "error").Inc()
	if !errors.Is(d.Err, rules.ErrBudget) { // those are logged once a rule and cycle (noteBudgets)
		cy.log.Error("rule failed on ticket", slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID), slog.Any("error", d.Err))
	}
}
