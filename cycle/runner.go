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
	Feed     *feed.Feed      // the change feed and the mirror
	Runs     firing.RuleRuns // when each rule last ran (ticks, a plan's dry run)
	Tickers  []TickFollower  // followers of the ticks (digests)
	Now      func() time.Time
	Stopping func() bool // the scheduler is stopping: no new firing starts
	Settings
	Metrics Metrics
}

// Settings are the cycles' settings, each a scheduler option.
type Settings struct {
	DMs           firing.DMSender // a dm:'s sender; nil: an alert to its fallback channel
	Lease         time.Duration
	ActionTimeout time.Duration
	CycleCap      int // max firings per cycle across rules
	MaxEndChecks  int // re-reads confirming episode ends, per cycle
	DryRun        bool
	Outlook       func(plan.Outlook) // dry runs: gets each cycle's outlook
}

// Metrics are the collectors the steps move (NewMetrics); the scheduler
// registers them with its own (Collectors).
type Metrics struct {
	Exec          firing.Metrics         // the execute step's counters
	OverBudget    *prometheus.CounterVec // rule
	DeferredByCap *prometheus.CounterVec // rule
	Queued        *prometheus.GaugeVec   // class
}

// NewMetrics makes the steps' collectors.
func NewMetrics() Metrics {
	return Metrics{
		Exec: firing.NewMetrics(),
		OverBudget: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "deskbot_rule_over_budget_total",
			Help: "Tickets on which a rule's expression went over its run-time budget (loop steps or memory), by rule."}, []string{"rule"}),
		DeferredByCap: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "deskbot_scheduler_deferred_by_cap_total",
			Help: "Decisions not executed in their cycle because the rule's max_firings_per_cycle or the cap across rules was reached; they fire in later cycles."}, []string{"rule"}),
		Queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "deskbot_scheduler_queued_firings",
			Help: "Decisions waiting for a later cycle (held back by a per-cycle cap, or queued when the cycle's share of the request budget ran out), by class (pages, alerts and direct messages, updates and notes, public replies, digests)."}, []string{"class"}),
	}
}

// Collectors are m's collectors, to register.
func (m Metrics) Collectors() []prometheus.Collector {
	return append(m.Exec.Collectors(), m.OverBudget, m.DeferredByCap, m.Queued)
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
