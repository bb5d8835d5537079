// Package scheduler polls the desk for deskbot's automation rules and
// executes their decisions: one gocron job per distinct (query, schedule)
// so that rules sharing a query share its requests, every page of every
// configured workspace, episodes ended only by complete polls, a re-read of
// each ticket before acting, each firing claimed in the ledger so that it
// happens once per episode even across crashes and replicas, and intervals
// stretched to stay within the background request budget.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"
	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// ErrNotLeader is returned by RunOnce (and by PGElector.IsLeader) when
// another replica holds the leadership.
var ErrNotLeader = errors.New("not the leader")

// Scheduler polls the desk and runs the rules. Create it with New, then
// Start it (or drive it with RunOnce), and Stop it.
type Scheduler struct {
	logger   *slog.Logger
	desk     Desk
	ledger   rules.Ledger
	notifier Notifier
	cfg      config
	m        *metrics
	statuses statusCache
	plan     *planner

	mu      sync.Mutex // guards the fields below
	set     *rules.Set
	jobs    []*job
	gs      gocron.Scheduler
	baseCtx context.Context
	stopped bool

	inflight sync.WaitGroup
	stopping atomic.Bool
	ticking  sync.Mutex // held while the escalator's Tick runs: one at a time
}

// New returns a scheduler for the rules of set over desk (see ClientDesk),
// recording firings in ledger and sending alerts through notifier (nil:
// LogNotifier on logger). Nothing is sent before Start or RunOnce.
func New(logger *slog.Logger, desk Desk, set *rules.Set, ledger rules.Ledger, notifier Notifier, opts ...Option) (*Scheduler, error) {
	if logger == nil {
		return nil, errors.New("new scheduler: logger is nil")
	}
	if desk == nil {
		return nil, errors.New("new scheduler: desk is nil")
	}
	if set == nil {
		return nil, errors.New("new scheduler: rules set is nil")
	}
	if ledger == nil {
		return nil, errors.New("new scheduler: ledger is nil")
	}
	if notifier == nil {
		notifier = LogNotifier{Logger: logger}
	}
	cfg := config{
		singleton:     true,
		lease:         DefaultLease,
		maxPages:      DefaultMaxPages,
		maxEndChecks:  DefaultMaxEndChecks,
		statusRefresh: DefaultStatusRefresh,
		actionTimeout: DefaultActionTimeout,
		stopTimeout:   DefaultStopTimeout,
		retention:     DefaultRetention,
	}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("new scheduler: nil option")
		}
		o(&cfg)
	}
	switch {
	case cfg.lease <= 0:
		return nil, fmt.Errorf("new scheduler: lease %v: want a positive duration", cfg.lease)
	case cfg.budget < 0:
		return nil, fmt.Errorf("new scheduler: budget %d: want 0 (no planning) or more requests per minute", cfg.budget)
	case cfg.maxEndChecks < 0:
		return nil, fmt.Errorf("new scheduler: max end checks %d: want 0 or more", cfg.maxEndChecks)
	case cfg.maxPages < 0:
		return nil, fmt.Errorf("new scheduler: max pages %d: want 0 (no cap) or more", cfg.maxPages)
	case cfg.statusRefresh <= 0 || cfg.actionTimeout <= 0 || cfg.stopTimeout <= 0:
		return nil, errors.New("new scheduler: status refresh, action timeout and stop timeout must be positive")
	case cfg.retention == 0:
		return nil, errors.New("new scheduler: retention 0: want a positive duration, or negative to keep every firing")
	case cfg.tickEvery < 0:
		return nil, fmt.Errorf("new scheduler: on-call tick %v: want a positive interval (0: default)", cfg.tickEvery)
	}
	if cfg.tickEvery == 0 {
		cfg.tickEvery = DefaultTickEvery
	}
	if err := checkPages(set, cfg.escalator); err != nil {
		return nil, fmt.Errorf("new scheduler: %w", err)
	}
	if cfg.clock == nil {
		cfg.clock = clockwork.NewRealClock()
	}
	s := &Scheduler{
		logger:   logger,
		desk:     desk,
		ledger:   ledger,
		notifier: notifier,
		cfg:      cfg,
		m:        newMetrics(cfg.reg),
		set:      set,
		baseCtx:  context.Background(),
	}
	s.plan = newPlanner(cfg.budget, s.m)
	return s, nil
}

// job polls one distinct (query, schedule) for the rules that share it.
type job struct {
	name  string
	key   string
	query string // the unexpanded query, as printed by filter
	every time.Duration
	cron  string
	sched cron.Schedule // cron parsed once, for the planner's intervals
	set   *rules.Set
	rules []*rules.Rule
	gj    gocron.Job // once added

	run sync.Mutex // held while a cycle runs
	// prevSeen is the tickets the last complete poll saw (guarded by run).
	prevSeen map[int64]bool

	stat         sync.Mutex
	lastStart    time.Time
	lastComplete time.Time
	lastOutcome  string
	lastRequests int
}

// buildJobs groups the rules of set by (query, schedule) and checks that
// every query fits the desk's limit once expanded with open.
func buildJobs(set *rules.Set, open []int) ([]*job, error) {
	byKey := map[string]*job{}
	var jobs []*job
	var errs []error
	for _, r := range set.Rules() {
		if _, err := r.ExpandQuery(open); err != nil {
			errs = append(errs, err)
			continue
		}
		q := r.QueryExpr().String()
		sched := "every " + r.Every.String()
		if r.Cron != "" {
			sched = "cron " + r.Cron
		}
		key := q + "|" + sched
		j := byKey[key]
		if j == nil {
			j = &job{key: key, query: q, every: r.Every, cron: r.Cron, set: set}
			byKey[key] = j
			jobs = append(jobs, j)
		}
		j.rules = append(j.rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, j := range jobs {
		j.name = j.rules[0].Name
		if len(j.rules) > 1 {
			j.name += fmt.Sprintf("+%d", len(j.rules)-1)
		}
		if j.every <= 0 && j.cron == "" {
			j.every = rules.DefaultEvery
		}
		if j.cron != "" {
			j.sched, _ = cron.ParseStandard(j.cron) // checked when the rules loaded
		}
	}
	return jobs, nil
}

func (j *job) ruleNames() []string {
	names := make([]string, len(j.rules))
	for i, r := range j.rules {
		names[i] = r.Name
	}
	return names
}

// Start reads the open statuses, checks every rule's expanded query, and
// starts polling: each duration job runs at once and then every interval,
// each cron job at its times. Jobs stop when ctx is cancelled or on Stop.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gs != nil || s.stopped {
		return errors.New("start scheduler: already started")
	}
	open, err := s.statuses.get(ctx, s, nil, true)
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	jobs, err := buildJobs(s.set, open)
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	gopts := []gocron.SchedulerOption{
		gocron.WithClock(s.cfg.clock),
		gocron.WithLocation(time.UTC),
		gocron.WithStopTimeout(s.cfg.stopTimeout),
	}
	if s.cfg.elector != nil {
		gopts = append(gopts, gocron.WithDistributedElector(s.cfg.elector))
	}
	gs, err := gocron.NewScheduler(gopts...)
	if err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	s.baseCtx = ctx
	for _, j := range jobs {
		if err := s.addJob(gs, j); err != nil {
			_ = gs.Shutdown()
			return fmt.Errorf("start scheduler: %w", err)
		}
	}
	if err := s.addTickJob(gs); err != nil {
		_ = gs.Shutdown()
		return fmt.Errorf("start scheduler: %w", err)
	}
	if err := s.addPruneJob(gs); err != nil {
		_ = gs.Shutdown()
		return fmt.Errorf("start scheduler: %w", err)
	}
	s.jobs, s.gs = jobs, gs
	s.plan.replan(jobs, s.cfg.clock.Now())
	gs.Start()
	s.logger.Info("scheduler started", slog.Int("jobs", len(jobs)), slog.Int("rules", len(s.set.Rules())),
		slog.Any("open_statuses", open), slog.Bool("dry_run", s.cfg.dryRun))
	return nil
}

func (s *Scheduler) addJob(gs gocron.Scheduler, j *job) error {
	def := gocron.DurationJob(j.every)
	opts := []gocron.JobOption{gocron.WithName(j.name), gocron.WithContext(s.baseCtx)}
	if j.cron != "" {
		def = gocron.CronJob(j.cron, false)
	} else {
		opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
	}
	if s.cfg.singleton {
		opts = append(opts, gocron.WithSingletonMode(gocron.LimitModeReschedule))
	}
	gj, err := gs.NewJob(def, gocron.NewTask(func(ctx context.Context) { s.runJob(ctx, j, true) }), opts...)
	if err != nil {
		return fmt.Errorf("add job %s (rules %s): %w", j.name, strings.Join(j.ruleNames(), ", "), err)
	}
	j.gj = gj
	return nil
}

// Stop stops polling: no new cycle or firing starts, the firings under way
// finish their actions (bounded by the action timeout), and Stop returns
// when every run has ended or ctx is done.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.stopping.Store(true)
	s.mu.Lock()
	gs := s.gs
	s.stopped = true
	s.mu.Unlock()
	var err error
	if gs != nil {
		if e := gs.ShutdownWithContext(ctx); e != nil {
			err = fmt.Errorf("stop scheduler: %w", e)
		}
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
// The jobs are rebuilt; a cycle under way finishes with the old rules.
func (s *Scheduler) Reload(set *rules.Set) error {
	if set == nil {
		return errors.New("reload rules: set is nil")
	}
	if err := checkPages(set, s.cfg.escalator); err != nil {
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
	open := s.statuses.current()
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
	if s.gs != nil {
		for _, j := range s.jobs {
			if j.gj == nil {
				continue
			}
			if err := s.gs.RemoveJob(j.gj.ID()); err != nil {
				s.logger.Warn("reload rules: remove job", slog.String("job", j.name), slog.Any("error", err))
			}
		}
		for _, j := range jobs {
			if err := s.addJob(s.gs, j); err != nil {
				return fmt.Errorf("reload rules: %w", err)
			}
		}
	}
	s.set, s.jobs = set, jobs
	s.plan.replan(jobs, s.cfg.clock.Now())
	s.logger.Info("rules reloaded", slog.Int("rules", len(set.Rules())), slog.Int("jobs", len(jobs)))
	return nil
}

// CycleResult says what one cycle of one job did.
type CycleResult struct {
	Job      string
	Rules    []string
	Complete bool  // every page of every workspace arrived
	Err      error // why the cycle is incomplete
	Skipped  string
	Tickets  int // tickets the filter returned
	Requests int // desk requests sent (retries included)
	// Decisions is how many (rule, ticket) decisions evaluation produced;
	// Fired how many firings finished in this cycle.
	Decisions int
	Fired     int
	Ended     int // episodes ended
	// Kept is how many episodes of tickets the poll missed stayed open:
	// a re-read showed the ticket still matching (the paging skipped it),
	// or it could not be re-read in this cycle.
	Kept int
}

// RunOnce runs one cycle of every job now, one after the other, ignoring
// the schedule and the budget's stretch (tests, `deskbot rules why`). With
// an elector it first asks it, and returns ErrNotLeader (wrapped) when
// another replica leads.
func (s *Scheduler) RunOnce(ctx context.Context) ([]CycleResult, error) {
	if s.cfg.elector != nil {
		if err := s.cfg.elector.IsLeader(ctx); err != nil {
			if !errors.Is(err, ErrNotLeader) {
				err = fmt.Errorf("%w: %w", ErrNotLeader, err)
			}
			return nil, fmt.Errorf("run once: %w", err)
		}
	}
	jobs, err := s.currentJobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("run once: %w", err)
	}
	out := make([]CycleResult, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, s.runJob(ctx, j, false))
	}
	return out, nil
}

// currentJobs returns the jobs, building them when the scheduler was not
// started.
func (s *Scheduler) currentJobs(ctx context.Context) ([]*job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jobs != nil {
		return s.jobs, nil
	}
	open, err := s.statuses.get(ctx, s, nil, false)
	if err != nil {
		return nil, err
	}
	jobs, err := buildJobs(s.set, open)
	if err != nil {
		return nil, err
	}
	s.jobs = jobs
	s.plan.replan(jobs, s.cfg.clock.Now())
	return jobs, nil
}

// Readiness is the scheduler's state for /readyz and `deskbot rules why`.
type Readiness struct {
	// Ready is true when every job finished at least one complete cycle.
	Ready bool
	// LastComplete is the latest complete cycle of any job.
	LastComplete time.Time
	// Stretch is the factor the budget stretches intervals by (1: none).
	Stretch float64
	Jobs    []JobStatus
}

// JobStatus describes one poll job.
type JobStatus struct {
	Name         string
	Rules        []string
	Query        string // unexpanded
	Every        time.Duration
	Cron         string
	LastStart    time.Time
	LastComplete time.Time
	LastOutcome  string // complete, incomplete or ""
	LastRequests int
}

// Ready reports the jobs and their last cycles.
func (s *Scheduler) Ready() Readiness {
	s.mu.Lock()
	jobs := slices.Clone(s.jobs)
	s.mu.Unlock()
	r := Readiness{Ready: true, Stretch: s.plan.stretch()}
	for _, j := range jobs {
		j.stat.Lock()
		st := JobStatus{Name: j.name, Rules: j.ruleNames(), Query: j.query, Every: j.every, Cron: j.cron,
			LastStart: j.lastStart, LastComplete: j.lastComplete, LastOutcome: j.lastOutcome, LastRequests: j.lastRequests}
		j.stat.Unlock()
		if st.LastComplete.IsZero() {
			r.Ready = false
		}
		if st.LastComplete.After(r.LastComplete) {
			r.LastComplete = st.LastComplete
		}
		r.Jobs = append(r.Jobs, st)
	}
	return r
}

// statusCache holds the desk's open statuses for the status:open macro.
type statusCache struct {
	mu      sync.Mutex
	open    []int
	known   map[int]bool
	fetched time.Time
	stale   bool
}

// get returns the open statuses, re-reading them when forced, when they
// are older than the refresh interval or when marked stale. A failed
// refresh keeps the old ones when there are any.
func (c *statusCache) get(ctx context.Context, s *Scheduler, cy *cycle, force bool) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.cfg.clock.Now()
	if !force && c.open != nil && !c.stale && now.Sub(c.fetched) < s.cfg.statusRefresh {
		return c.open, nil
	}
	open, err := s.desk.OpenStatuses(ctx)
	if cy != nil {
		cy.requests++
	}
	if err != nil {
		if c.open != nil {
			s.logger.Warn("refresh open statuses failed; keeping the known ones", slog.Any("error", err))
			return c.open, nil
		}
		return nil, fmt.Errorf("read open statuses: %w", err)
	}
	if len(open) == 0 {
		return nil, errors.New("read open statuses: the desk has no open status")
	}
	open = slices.Clone(open)
	slices.Sort(open)
	if c.open != nil && !slices.Equal(open, c.open) {
		s.logger.Info("open statuses changed", slog.Any("before", c.open), slog.Any("now", open))
	}
	c.open, c.fetched, c.stale = open, now, false
	c.known = make(map[int]bool, len(open))
	for _, id := range open {
		c.known[id] = true
	}
	return c.open, nil
}

func (c *statusCache) current() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// notice marks the statuses stale when t shows an open status the cache
// does not know (a custom status added since the last read).
func (c *statusCache) notice(t *sdclient.Ticket) bool {
	if t == nil || !sdclient.IsOpenStatus(t.Status) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil || c.known[t.Status] {
		return false
	}
	c.stale = true
	return true
}
