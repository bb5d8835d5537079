package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// ErrNotLeader is returned by RunOnce when another replica holds the
// leadership. It is the store's sentinel (store.(*Leadership).IsLeader
// returns it), so errors.Is works whichever of the two wrapped it.
var ErrNotLeader = store.ErrNotLeader

// Scheduler polls the desk and runs the rules. Create it with New, then
// Start it (or drive it with RunOnce), and Stop it.
type Scheduler struct {
	logger *slog.Logger
	desk   firing.Desk
	ledger firing.Ledger
	marks  *firing.LedgerMarks // what signs the firings' notes and replies
	paging *firing.Paging      // pages started by rules; nil: no escalator
	cfg    config
	m      *metrics
	plan   *planner
	runs   firing.RuleRuns // when each rule last ran (schedule.go)
	feed   *feed.Feed      // the change feed and the mirror
	runner *cycle.Runner   // one cycle's steps, and what cycles remember

	mu      sync.Mutex // guards the fields below
	set     *rules.Set
	jobs    []*job
	tick    time.Duration // the cycle's tick (tickFor the jobs)
	gs      gocron.Scheduler
	cycleJ  gocron.Job      // the gocron job that ticks the cycle
	baseCtx context.Context // the jobs' and background syncs' context
	cancel  context.CancelFunc
	stopped bool

	running sync.Mutex // held while a cycle runs
	spent   spentLog   // the scheduler's requests of the last minute (queue.go)

	inflight sync.WaitGroup
	stopping atomic.Bool
}

// New returns a scheduler for the rules of set over desk (see
// firing.ClientDesk), recording firings in ledger and sending alerts
// through notifier (nil: LogNotifier on logger). Nothing is sent before
// Start or RunOnce.
func New(logger *slog.Logger, desk firing.Desk, set *rules.Set, ledger firing.Ledger, notifier firing.Notifier, opts ...Option) (*Scheduler, error) {
	switch {
	case logger == nil:
		return nil, errors.New("new scheduler: logger is nil")
	case desk == nil:
		return nil, errors.New("new scheduler: desk is nil")
	case set == nil:
		return nil, errors.New("new scheduler: rules set is nil")
	case ledger == nil:
		return nil, errors.New("new scheduler: ledger is nil")
	}
	if notifier == nil {
		notifier = firing.LogNotifier{Logger: logger}
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("new scheduler: nil option")
		}
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new scheduler: %w", err)
	}
	if err := firing.CheckPages(set, cfg.escalator); err != nil {
		return nil, fmt.Errorf("new scheduler: %w", err)
	}
	s := &Scheduler{logger: logger, desk: desk, ledger: ledger, marks: firing.MarksOf(ledger), cfg: cfg,
		m: newMetrics(cfg.reg), set: set, baseCtx: context.Background()}
	f, err := s.newFeed(cfg)
	if err != nil {
		return nil, fmt.Errorf("new scheduler: %w", err)
	}
	s.feed = f
	s.paging = s.newPaging()
	s.runs = firing.RuleRunsFor(cfg.runs, ledger, cfg.run.DryRun)
	s.tick = rules.DefaultEvery
	s.plan = newPlanner(cfg.budget, s.m)
	s.plan.listBudget = float64(cfg.listBudget)
	s.runner = cycle.New(cycle.Deps{ // one cycle's steps, and what the cycles remember
		Desk: s.desk, Ledger: s.ledger, Marks: s.marks, Paging: s.paging, Notifier: notifier,
		Feed: s.feed, Runs: s.runs, Tickers: s.cfg.tickers, Now: s.cfg.clock.Now, Stopping: s.stopping.Load,
		Settings: s.cfg.run, Metrics: s.m.Metrics,
	})
	return s, nil
}

// Start reads the open statuses, checks every rule's expanded query, and
// starts the cycle: at once, then every tick (the greatest common divisor
// of the rules' intervals, a minute at most when a rule has a cron
// schedule), each tick running the rules whose time has come. The first
// start on an empty store begins a full sync of the mirror in the
// background; rules act on what is mirrored meanwhile. Everything stops
// when ctx is cancelled or on Stop.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gs != nil || s.stopped {
		return errors.New("start scheduler: already started")
	}
	open, jobs, err := s.buildJobs(ctx, true)
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	gopts := []gocron.SchedulerOption{gocron.WithClock(s.cfg.clock), gocron.WithLocation(time.UTC),
		gocron.WithStopTimeout(s.cfg.stopTimeout)}
	if s.cfg.elector != nil {
		gopts = append(gopts, gocron.WithDistributedElector(s.cfg.elector))
	}
	gs, err := gocron.NewScheduler(gopts...)
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	s.baseCtx, s.cancel = context.WithCancel(ctx)
	adoptJobs(s.jobs, jobs)
	s.jobs = jobs
	for _, add := range []func(gocron.Scheduler) error{s.addCycleJob, s.addTickJob, s.addPruneJob} {
		if err := add(gs); err != nil {
			_ = gs.Shutdown()
			return fmt.Errorf("start scheduler: %w", err)
		}
	}
	s.gs = gs
	gs.Start()
	s.logger.Info("scheduler started", slog.Int("jobs", len(jobs)), slog.Int("rules", len(s.set.Rules())),
		slog.Duration("tick", s.tick), slog.Any("open_statuses", open), slog.Bool("dry_run", s.cfg.run.DryRun))
	return nil
}

// tickEvery is the cycle's tick now.
func (s *Scheduler) tickEvery() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tick
}

// addCycleJob schedules the cycle at the tick of s.jobs (caller holds mu).
func (s *Scheduler) addCycleJob(gs gocron.Scheduler) error {
	s.retick()
	gj, err := s.addJob(gs, "cycle", s.tick, func(ctx context.Context) { s.runCycle(ctx, scheduled) }, s.ticking()...)
	s.cycleJ = gj
	return err
}

// retick sets the cycle's tick for s.jobs, and the planner's (caller
// holds mu).
func (s *Scheduler) retick() {
	s.tick = tickFor(s.jobs)
	s.plan.replan(s.tick)
}

// addJob schedules task every d on gs as name, on the jobs' context.
func (s *Scheduler) addJob(gs gocron.Scheduler, name string, d time.Duration, task func(context.Context), opts ...gocron.JobOption) (gocron.Job, error) {
	opts = append(opts, gocron.WithName(name), gocron.WithContext(s.baseCtx))
	gj, err := gs.NewJob(gocron.DurationJob(d), gocron.NewTask(task), opts...)
	if err != nil {
		return nil, fmt.Errorf("add the %s job (every %v): %w", name, d, err)
	}
	return gj, nil
}

// ticking is how the cycle and the escalator's tick run: at once, then
// every interval, skipping a tick while a run goes on (WithSingleton).
func (s *Scheduler) ticking() []gocron.JobOption {
	opts := []gocron.JobOption{gocron.WithStartAt(gocron.WithStartImmediately())}
	if s.cfg.singleton {
		opts = append(opts, gocron.WithSingletonMode(gocron.LimitModeReschedule))
	}
	return opts
}

// Stop stops polling: no new cycle or firing starts, the firings under way
// finish their actions (bounded by the action timeout), and Stop returns
// when every run has ended or ctx is done.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.stopping.Store(true)
	s.mu.Lock()
	gs, cancel := s.gs, s.cancel
	s.stopped = true
	s.mu.Unlock()
	var err error
	if gs != nil {
		if e := gs.ShutdownWithContext(ctx); e != nil {
			err = fmt.Errorf("stop scheduler: %w", e)
		}
	}
	if cancel != nil {
		cancel() // a background full sync, a kicked cycle: no new request
	}
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("stop scheduler: runs still under way: %w", ctx.Err()))
	}
	s.logger.Info("scheduler stopped")
	return err
}

// Reload replaces the rules (SIGHUP). The new set is checked first (every
// expanded query within the desk's limit); on error the old rules stay.
// The jobs are rebuilt and the cycle re-ticked; a cycle under way finishes
// with the old rules. The mirror stays: new every rules run on it at once;
// the others keep their schedules, and a new cron rule waits for its time.
func (s *Scheduler) Reload(set *rules.Set) error {
	if set == nil {
		return errors.New("reload rules: set is nil")
	}
	if err := firing.CheckPages(set, s.cfg.escalator); err != nil {
		return fmt.Errorf("reload rules: %w", err)
	}
	// The escalator gets the new policies only once the new rules are
	// accepted (below); pages under way continue under the same names.
	defer func() {
		s.mu.Lock()
		accepted := s.set == set
		s.mu.Unlock()
		if accepted && s.cfg.escalator != nil {
			s.cfg.escalator.SetConfig(set.OnCall())
		}
	}()
	open := s.feed.KnownStatuses()
	s.mu.Lock()
	defer s.mu.Unlock()
	if open == nil && s.gs == nil {
		s.set = set // not started: Start checks the queries
		return nil
	}
	jobs, err := buildJobs(set, open)
	if err != nil {
		return fmt.Errorf("reload rules: %w", err)
	}
	adoptJobs(s.jobs, jobs)
	s.set, s.jobs = set, jobs
	if s.gs != nil && tickFor(jobs) != s.tick {
		if s.cycleJ != nil {
			if err := s.gs.RemoveJob(s.cycleJ.ID()); err != nil {
				s.logger.Warn("reload rules: remove the cycle job", slog.Any("error", err))
			}
		}
		if err := s.addCycleJob(s.gs); err != nil {
			return fmt.Errorf("reload rules: %w", err)
		}
	}
	// At debug: the caller logs the reload once, at info.
	s.logger.Debug("rules reloaded", slog.Int("rules", len(set.Rules())), slog.Int("jobs", len(jobs)))
	return nil
}

// currentJobs returns the jobs, building them when the scheduler was not
// started.
func (s *Scheduler) currentJobs(ctx context.Context) ([]*job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs != nil {
		return s.jobs, nil
	}
	_, jobs, err := s.buildJobs(ctx, false)
	if err != nil {
		return nil, err
	}
	s.jobs = jobs
	s.retick()
	return jobs, nil
}

// buildJobs reads the open statuses (refresh: from the desk) and builds
// the jobs of the rules (caller holds mu).
func (s *Scheduler) buildJobs(ctx context.Context, refresh bool) ([]int, []*job, error) {
	open, err := s.feed.OpenStatuses(ctx, refresh)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := buildJobs(s.set, open)
	return open, jobs, err
}

// The scheduler's side of the change feed (package feed): the feed it
// builds, wired to its context, leadership and kicked cycles.

// newFeed builds the scheduler's feed from its configuration.
func (s *Scheduler) newFeed(cfg config) (*feed.Feed, error) {
	ms, _ := s.ledger.(feed.MirrorStore) // *store.Store keeps the mirror too; nil: in memory
	opts := []feed.Option{
		feed.WithLogger(s.logger),
		feed.WithClock(cfg.clock),
		feed.WithMirrorStore(ms),
		feed.WithRegistry(cfg.reg),
		feed.WithLeads(s.leads),
		feed.WithBackground(func(run func(context.Context)) {
			s.inflight.Add(1)
			go func() {
				defer s.inflight.Done()
				run(s.baseCtx)
			}()
		}),
		// A first full sync finished: run every rule on the whole
		// mirror now rather than at the next tick.
		feed.WithFirstSynced(func(ctx context.Context) { s.runCycle(ctx, kicked) }),
	}
	return feed.New(s.desk, append(opts, cfg.feed...)...) // WithFeed, WithSubscriber
}

// Feed is the scheduler's change feed and mirror (for LiveMirror.Attach).
func (s *Scheduler) Feed() *feed.Feed { return s.feed }

// MirrorHealth is the mirror's part of /readyz (see feed.Feed.Health).
func (s *Scheduler) MirrorHealth(ctx context.Context) error {
	return s.feed.Health(ctx, s.tickEvery())
}

// leads reports, without asking anyone, whether this replica's scheduler
// leads: an elector that cannot say so at once (no Leader method) counts
// as not leading, and LiveMirror reads the store.
func (s *Scheduler) leads() bool {
	if s.cfg.elector == nil {
		return true
	}
	l, ok := s.cfg.elector.(interface{ Leader() bool })
	return ok && l.Leader()
}
