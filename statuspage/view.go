package statuspage

import (
	"context"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/store"
)

// statusView is what the pages show of the scheduler, read from its
// memory and the state store: building it never asks the desk.
type statusView struct {
	At    time.Time           // the scheduler's clock when the view was taken
	Set   *rules.Set          // the rules running now
	Ready scheduler.Readiness // the jobs, their last cycles, the mirrors
	// Tickets is how many tickets the mirrors hold.
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

// viewOf takes the status pages' view of the scheduler's memory m. It
// makes no desk request.
func viewOf(ctx context.Context, m scheduler.Memory) (statusView, error) {
	v := statusView{At: m.At, Set: m.Set, Ready: m.Ready, DryRun: m.DryRun, Tick: m.Tick}
	for _, ms := range v.Ready.Mirror {
		v.Tickets += ms.Tickets
	}
	runs, err := m.Runs.RuleRuns(ctx)
	if err != nil {
		return v, fmt.Errorf("status view: %w", err)
	}
	v.Runs = runs
	v.Held = m.Held.Tickets()
	v.Matches = m.Matches.Matches(v.Set)
	v.OverBudget = m.Budgets.Over()
	return v, nil
}

// outlookOf is what `deskbot rules plan` shows, from the scheduler's
// memory m and the ledger (firing.PlanOutlook): a rule not evaluated yet
// in this process matches nothing in it.
func outlookOf(ctx context.Context, m scheduler.Memory) (plan.Outlook, error) {
	runs, err := m.Runs.RuleRuns(ctx)
	if err != nil {
		return plan.Outlook{}, fmt.Errorf("plan outlook: %w", err)
	}
	return firing.PlanOutlook(ctx, firing.OutlookInput{Set: m.Set, Now: m.At, Tick: m.Tick, CycleCap: m.CycleCap,
		Runs: runs, Decisions: m.Matches.Decisions(m.Set), Ledger: m.Ledger,
		WaitingSince: func(fires []rules.Decision) map[rules.FiringKey]time.Time { return m.Waiting.Since(fires, nil) }})
}
