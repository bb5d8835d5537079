package cycle

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
)

// Deps is what a Runner's steps need, set once by the scheduler (New).
type Deps struct {
	Desk     firing.Desk
	Ledger   firing.Ledger
	Marks    *firing.LedgerMarks // what signs the firings' notes and replies
	Paging   *firing.Paging      // pages started by rules; nil: no escalator
	Notifier firing.Notifier
	DMs      firing.DMSender
	Feed     *feed.Feed      // the change feed and the mirror
	Runs     firing.RuleRuns // when each rule last ran (ticks, a plan's dry run)
	Tickers  []TickFollower  // followers of the ticks (digests)
	Now      func() time.Time
	Stopping func() bool // the scheduler is stopping: no new firing starts

	Lease         time.Duration
	ActionTimeout time.Duration
	CycleCap      int // max firings per cycle across rules
	MaxEndChecks  int // re-reads confirming episode ends, per cycle
	DryRun        bool
	Outlook       func(plan.Outlook) // dry runs: gets each cycle's outlook
	Metrics       Metrics
}

// Metrics are the collectors the steps move; the scheduler registers them
// (their names are the scheduler's).
type Metrics struct {
	Exec          firing.Metrics         // the execute step's counters
	OverBudget    *prometheus.CounterVec // rule
	DeferredByCap *prometheus.CounterVec // rule
	Queued        *prometheus.GaugeVec   // class
}

// Runner runs cycles of the rules (Run) and keeps what they remember from
// one to the next. Build it once with New; one Run at a time.
type Runner struct {
	d       Deps
	budgets firing.Budgets     // rules over their run-time budget
	held    plan.HeldMemory    // decisions the last cycles held back
	waiting plan.WaitingMemory // since when held back decisions wait
	dry     firing.DryRun      // what earlier dry-run cycles would have fired
	people  firing.People      // names of requesters, agents and groups for the rules
	matches plan.MatchMemory   // each rule's last evaluation, for the status pages
}

// New returns a Runner over d.
func New(d Deps) *Runner { return &Runner{d: d} }

// Memories are what the runner's cycles remember, for the status pages,
// the explainer and /readyz to read (never to change).
type Memories struct {
	People  *firing.People      // the names looked up for the rules (digests' groups)
	Held    *plan.HeldMemory    // what each rule's last cycle held back
	Matches *plan.MatchMemory   // each rule's last evaluation in this process
	Waiting *plan.WaitingMemory // since when held-back decisions wait
	Budgets *firing.Budgets     // the rules over their run-time budget
}

// Memories returns the runner's memories.
func (r *Runner) Memories() Memories {
	return Memories{People: &r.people, Held: &r.held, Matches: &r.matches, Waiting: &r.waiting, Budgets: &r.budgets}
}
