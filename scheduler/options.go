package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
)

// Defaults of New.
const (
	// DefaultLease is how long a claim stays reserved (WithLease).
	DefaultLease = 2 * time.Minute
	// DefaultMaxEndChecks bounds the re-reads one cycle spends confirming
	// that tickets a multi-page poll missed really left their rules.
	DefaultMaxEndChecks = 50
	// DefaultActionTimeout bounds one firing's actions (WithActionTimeout).
	DefaultActionTimeout = 30 * time.Second
	// DefaultStopTimeout bounds how long Stop waits (WithStopTimeout).
	DefaultStopTimeout = 30 * time.Second
	// DefaultRetention is how long finished firings that are no longer the
	// current one of their (rule, ticket) stay in the ledger.
	DefaultRetention = 30 * 24 * time.Hour
	// PruneEvery is how often the ledger is pruned.
	PruneEvery = 6 * time.Hour
	// DefaultMaxFiringsPerCycle bounds the firings of one cycle across
	// every rule (each rule has its own bound too, max_firings_per_cycle):
	// a first run on a busy desk stays calm, the rest fires in later cycles.
	DefaultMaxFiringsPerCycle = 50
	// DefaultTickEvery is how often the escalator's due steps are taken: the
	// delay between a level's wait running out and the next level being
	// paged is at most this long.
	DefaultTickEvery = 20 * time.Second
)

// Option configures New.
type Option func(*config)

type config struct {
	run         cycle.Settings // the cycles' (package cycle)
	feed        []feed.Option  // WithFeed, WithSubscriber
	tickers     []cycle.TickFollower
	clock       clockwork.Clock
	elector     gocron.Elector
	reg         prometheus.Registerer
	singleton   bool
	budget      int
	listBudget  int
	runs        firing.RuleRuns // schedule.go
	stopTimeout time.Duration
	escalator   firing.Escalator
	tickEvery   time.Duration
	retention   time.Duration
}

// WithClock sets the clock of the scheduler (gocron's timers and each
// cycle's now). Tests pass a clockwork fake clock. Default: the real clock.
func WithClock(c clockwork.Clock) Option { return func(cfg *config) { cfg.clock = c } }

// WithFeed passes opts to the change feed and its mirror (feed.New; the
// mirror is kept by default in the ledger when it is a feed.MirrorStore,
// as *store.Store is). The scheduler sets the feed's logger, clock,
// registry and hooks itself.
func WithFeed(opts ...feed.Option) Option {
	return func(cfg *config) { cfg.feed = append(cfg.feed, opts...) }
}

// WithElector makes only the replica whose elector says so poll (gocron
// asks it before every run; RunOnce asks it too): store.(*Store).Leadership
// gives one for the store's engine.
func WithElector(e gocron.Elector) Option { return func(cfg *config) { cfg.elector = e } }

// WithRegistry registers the scheduler's metrics on reg. Without it the
// metrics are kept but not exported.
func WithRegistry(reg prometheus.Registerer) Option { return func(cfg *config) { cfg.reg = reg } }

// WithDryRun makes the cycles log every decision instead of acting
// (cycle.Settings.DryRun).
func WithDryRun(on bool) Option { return func(cfg *config) { cfg.run.DryRun = on } }

// WithSingleton turns gocron's singleton mode on or off (default on: a run
// that is still going makes the next tick skip). The scheduler also never
// runs one job twice at once whatever this says; tests driving gocron with
// a fake clock turn it off (see the gocron notes on fake-clock flakiness).
func WithSingleton(on bool) Option { return func(cfg *config) { cfg.singleton = on } }

// WithLease sets cycle.Settings.Lease (default DefaultLease).
func WithLease(d time.Duration) Option { return func(cfg *config) { cfg.run.Lease = d } }

// WithBudget sets the background share of the desk budget, in requests per
// minute, that polling may plan to use (typically the client's rate minus
// its interactive reserve). When recent cycles show that the jobs would
// need more, every interval is stretched by the same factor. 0 (default)
// disables planning; the client's limiter still enforces the hard budget.
func WithBudget(perMinute int) Option { return func(cfg *config) { cfg.budget = perMinute } }

// WithListBudget sets the background share of the desk's separate ticket
// list budget (sdclient.WithListRatePerMinute) that the change feed and
// its sweeps may plan to use; cycles are stretched when they would need
// more. 0 (default): lists are planned only as part of WithBudget.
func WithListBudget(perMinute int) Option { return func(cfg *config) { cfg.listBudget = perMinute } }

// WithMaxEndChecks bounds the re-reads one cycle spends confirming episode
// ends (cycle.Settings.MaxEndChecks; default DefaultMaxEndChecks).
func WithMaxEndChecks(n int) Option { return func(cfg *config) { cfg.run.MaxEndChecks = n } }

// WithActionTimeout sets cycle.Settings.ActionTimeout (default 30s).
func WithActionTimeout(d time.Duration) Option {
	return func(cfg *config) { cfg.run.ActionTimeout = d }
}

// WithEscalator makes page actions start on-call pages through e, runs
// e's Tick every tickEvery (0: DefaultTickEvery) and hands it the on-call
// section of reloaded rules. Without it a rules file with page actions is
// refused.
func WithEscalator(e firing.Escalator, tickEvery time.Duration) Option {
	return func(cfg *config) { cfg.escalator, cfg.tickEvery = e, tickEvery }
}

// WithStopTimeout bounds how long Stop waits for running jobs (default 30s).
func WithStopTimeout(d time.Duration) Option { return func(cfg *config) { cfg.stopTimeout = d } }

// WithRetention sets how long finished firings that no longer decide
// anything (earlier `once: every` repeats, earlier episodes) are kept before
// the ledger is pruned; the current firing of every (rule, ticket) is kept
// for ever. Default DefaultRetention; a negative value turns pruning off.
func WithRetention(d time.Duration) Option { return func(cfg *config) { cfg.retention = d } }

// WithMaxFiringsPerCycle bounds the firings one cycle starts across every
// rule (cycle.Settings.CycleCap; default DefaultMaxFiringsPerCycle). A
// job with decisions held back runs again at the next tick (finishJob).
func WithMaxFiringsPerCycle(n int) Option { return func(cfg *config) { cfg.run.CycleCap = n } }

// WithOutlook sets cycle.Settings.Outlook (deskbot rules plan).
func WithOutlook(f func(plan.Outlook)) Option { return func(cfg *config) { cfg.run.Outlook = f } }

// defaultConfig is New's configuration before its options.
func defaultConfig() config {
	return config{
		singleton: true,
		run: cycle.Settings{Lease: DefaultLease, MaxEndChecks: DefaultMaxEndChecks, ActionTimeout: DefaultActionTimeout,
			CycleCap: DefaultMaxFiringsPerCycle},
		stopTimeout: DefaultStopTimeout,
		retention:   DefaultRetention,
	}
}

// validate checks the options and fills in the defaults that depend on
// them.
func (cfg *config) validate() error {
	switch {
	case cfg.run.Lease <= 0:
		return fmt.Errorf("lease %v: want a positive duration", cfg.run.Lease)
	case cfg.listBudget < 0:
		return fmt.Errorf("list budget %d: want 0 (not planned apart) or more ticket lists per minute", cfg.listBudget)
	case cfg.budget < 0:
		return fmt.Errorf("budget %d: want 0 (no planning) or more requests per minute", cfg.budget)
	case cfg.run.MaxEndChecks < 0:
		return fmt.Errorf("max end checks %d: want 0 or more", cfg.run.MaxEndChecks)
	case cfg.run.ActionTimeout <= 0 || cfg.stopTimeout <= 0:
		return errors.New("action timeout and stop timeout must be positive")
	case cfg.retention == 0:
		return errors.New("retention 0: want a positive duration, or negative to keep every firing")
	case cfg.run.CycleCap < 0:
		return fmt.Errorf("max firings per cycle %d: want 0 (no bound across rules) or more", cfg.run.CycleCap)
	case cfg.tickEvery < 0:
		return fmt.Errorf("on-call tick %v: want a positive interval (0: default)", cfg.tickEvery)
	}
	if cfg.tickEvery == 0 {
		cfg.tickEvery = DefaultTickEvery
	}
	if cfg.clock == nil {
		cfg.clock = clockwork.NewRealClock()
	}
	return nil
}

// The feed's other followers live beside the chat they serve (bot/follow);
// the scheduler wires them and never imports them.

// WithSubscriber has sub told, after each sync, the tickets the change
// feed saw change (live threads).
func WithSubscriber(sub feed.Subscriber) Option {
	return func(cfg *config) {
		if sub != nil {
			cfg.feed = append(cfg.feed, feed.WithSubscriber(sub))
		}
	}
}

// WithDMs sets cycle.Settings.DMs, the sender of the rules' direct messages.
func WithDMs(d firing.DMSender) Option { return func(cfg *config) { cfg.run.DMs = d } }

// WithTickFollower has f follow the scheduler's ticks on the leader,
// beside the rules, over the mirror as the tick's sync left it (digests);
// the cycle runs them after its sync.
func WithTickFollower(f cycle.TickFollower) Option {
	return func(cfg *config) {
		if f != nil {
			cfg.tickers = append(cfg.tickers, f)
		}
	}
}
