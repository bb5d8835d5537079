package cycle

import (
	"context"
	"errors"
	"log/slog"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// outcomes is what the execute step did (firing.Execute), and the desk
// requests it spent: the planner stretches the polling, not the draining
// of a backlog, which the queue's pace bounds.
type outcomes struct {
	firing.Outcomes
	requests int
}

// execute is the execute step: firing.Execute over the plan, at the
// queue's pace (In.Fits).
func (r *Runner) execute(ctx context.Context, c run, p *plan.Plan) outcomes {
	before := *c.n
	out := firing.Execute(ctx, r.firingDeps(c), c.Cycle, p, c.in.Fits)
	return outcomes{Outcomes: out, requests: *c.n - before}
}

// firingDeps is what the cycle's firings need: the Notifier and the
// DMSender as cmd/deskbot wired them, the desk, ledger and clock, each
// desk request counted in the cycle.
func (r *Runner) firingDeps(c run) *firing.Deps {
	d := &firing.Deps{
		Ledger: r.d.Ledger, Desk: c.desk, Count: c.count,
		Source: r.source(c), Notifier: r.d.Notifier, DMs: r.d.DMs,
		Marks: r.d.Marks.Get, Now: r.d.Now, Stopping: r.d.Stopping,
		Lease: r.d.Lease, ActionTimeout: r.d.ActionTimeout, MatchedSince: r.matches.Since,
		Metrics: r.d.Metrics.Exec,
	}
	if r.d.Paging != nil {
		d.Pages = r.d.Paging
	}
	return d
}

// source is the desk and the mirror as c's re-reads see them.
func (r *Runner) source(c run) firing.DeskSource {
	return firing.DeskSource{Desk: c.desk, Count: c.count, Mirror: r.d.Feed, Log: c.Log}
}

// dryRun is the execute step of a dry run (firing.DryRun): it says what
// the cycle would have done and executes nothing. Its outcomes hold back
// what the caps would have.
func (r *Runner) dryRun(ctx context.Context, c run, decisions []rules.Decision) outcomes {
	for _, d := range decisions {
		if d.Err != nil {
			r.noteFailed(c, d)
		}
	}
	var runs firing.RuleRunReader // a plan's cycle shows each rule at its next run
	if c.in.Once {
		runs = r.d.Runs
	}
	held := r.dry.Run(ctx, firing.DryCycle{
		Cycle: c.Cycle, Decisions: decisions, Tick: c.in.Tick, CycleCap: r.d.CycleCap, Complete: r.d.Feed.Complete(),
		Runs: runs, Tickets: r.d.Feed.Snapshot, Ledger: r.d.Ledger, Notifier: r.d.Notifier,
		Count:         func(rule, outcome string) { r.d.Metrics.Exec.Decisions.WithLabelValues(rule, outcome).Inc() },
		Outlook:       r.d.Outlook,
		ActionTimeout: r.d.ActionTimeout,
	})
	return outcomes{Outcomes: firing.Outcomes{Held: held, Reads: firing.NewRereads()}}
}

// notePlan counts and logs what planning decided: failed decisions, those
// already fired, those the caps held back. Storm control's caps and groups
// are plan's (plan/storm.go); its grouped alerts and pages firing's.
func (r *Runner) notePlan(c run, p *plan.Plan) {
	for _, d := range p.Failed {
		r.noteFailed(c, d)
	}
	for _, d := range p.Fired {
		r.d.Metrics.Exec.Decisions.WithLabelValues(d.Rule, "already_fired").Inc()
	}
	for name, held := range p.Held {
		n := float64(len(held))
		r.d.Metrics.Exec.Decisions.WithLabelValues(name, "deferred").Add(n)
		r.d.Metrics.DeferredByCap.WithLabelValues(name).Add(n)
		c.Log.Info("per-cycle cap reached: the rest of the rule's firings wait for the next cycles",
			slog.String("rule", name), slog.Int("firing", p.PerRule[name]), slog.Int("held_back", len(held)),
			slog.Int("rule_cap", plan.RuleCap(c.Set.Rule(name))), slog.Int("cycle_cap", r.d.CycleCap))
	}
}

// noteFailed counts and logs a decision that failed.
func (r *Runner) noteFailed(c run, d rules.Decision) {
	r.d.Metrics.Exec.Decisions.WithLabelValues(d.Rule, "error").Inc()
	if !errors.Is(d.Err, rules.ErrBudget) { // those are logged once a rule and cycle (firing.Budgets)
		c.Log.Error("rule failed on ticket", slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID), slog.Any("error", d.Err))
	}
}
