package cycle

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/prom"
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
	// DMs sends the rules' direct messages. Without it a dm: is posted as
	// an alert to its fallback channel, saying for whom it was.
	DMs firing.DMSender
	// Lease is how long a claim stays reserved before another worker may
	// take it over. It must outlast a firing's actions.
	Lease time.Duration
	// ActionTimeout bounds one firing's actions. Actions under way when
	// the scheduler stops get this long to finish.
	ActionTimeout time.Duration
	// CycleCap bounds the firings one cycle starts across every rule (0:
	// no bound beyond each rule's own max_firings_per_cycle). The
	// decisions over it are not executed in this cycle: their tickets
	// still match, and the next cycles fire them. They are counted in
	// deskbot_scheduler_deferred_by_cap_total and shown by the explainer
	// (Memories.Held).
	CycleCap int
	// MaxEndChecks bounds the ticket re-reads one cycle spends confirming
	// episode ends. A ticket with an open episode that the mirror does not
	// hold (a full sync's paging skipped it, or the episode is older than
	// the mirror) ends its episode only once a re-read shows it gone or no
	// longer matching; episodes beyond the bound stay open until a later
	// cycle. 0 never ends such an episode.
	MaxEndChecks int
	// DryRun logs every decision instead of acting: no desk writes, no
	// alerts, no ledger changes.
	DryRun bool
	// Outlook, in a dry run, is handed each cycle's plan.Outlook, on the
	// cycle's goroutine.
	Outlook func(plan.Outlook)
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
		OverBudget: prom.CounterVec("deskbot_rule_over_budget_total",
			"Tickets on which a rule's expression went over its run-time budget (loop steps or memory), by rule.", "rule"),
		DeferredByCap: prom.CounterVec("deskbot_scheduler_deferred_by_cap_total",
			"Decisions not executed in their cycle because the rule's max_firings_per_cycle or the cap across rules was reached; they fire in later cycles.", "rule"),
		Queued: prom.GaugeVec("deskbot_scheduler_queued_firings",
			"Decisions waiting for a later cycle (held back by a per-cycle cap, or queued when the cycle's share of the request budget ran out), by class (pages, alerts and direct messages, updates and notes, public replies, digests).", "class"),
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
