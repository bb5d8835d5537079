package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// A cycle is four steps in order, each in its own file: sync the mirror
// (package feed, through feed.go), evaluate the due rules on it
// (evaluate.go), reconcile their episodes (reconcile.go) and execute the
// decisions (execute.go).

// cycle is the state of one cycle.
type cycle struct {
	desk     Desk // s.desk, whose waits for the rate budget end with the cycle's ctx
	now      time.Time
	log      *slog.Logger
	set      *rules.Set
	due      []*job
	rules    []*rules.Rule // the due jobs' rules, in file order
	once     bool          // RunCycle: every rule, due or not (a plan shows each at its next run)
	requests int

	inMirror map[int64]bool             // tickets the mirror held when evaluated
	fresh    map[int64]*sdclient.Ticket // re-read tickets, once per ticket
	gone     map[int64]bool             // re-read said 404
	agents   map[string]int64           // e-mail -> agent id
	fired    map[rules.FiringKey]bool   // one firing per rule per ticket per cycle
	begun    map[rules.FiringKey]bool   // firings under way: finish them, no re-check
	firedBy  map[string]int             // finished firings by rule

	// Storm control (storm.go).
	admitted map[rules.FiringKey]bool  // decisions the cycle executes
	held     map[string]map[int64]Held // decisions held back by a cap, by rule and ticket
	grouping map[string]bool           // rules whose alerts are grouped in this cycle
	// pageGrouping are the rules whose pages this cycle starts without
	// their first step; the cycle then ticks the escalator once, which
	// sends one direct message per person for them all.
	pageGrouping  map[string]bool
	deferredPages int                 // pages started without their first step
	groups        map[groupKey][]*run // firings waiting for their grouped alert

	endChecks int // re-reads spent confirming episode ends (see confirmEnds)

	// deadline is when a scheduled cycle stops starting firings (zero:
	// never, RunCycle); queued counts the decisions it left for later.
	deadline time.Time
	queued   int
	// execRequests are the requests of the execute step: the planner
	// stretches the polling, not the draining of a backlog, which the
	// deadline bounds.
	execRequests int
	// states are the ledger states of the cycle's decisions, by rule and
	// ticket, read at once by prefetchStates.
	states map[string]map[int64]rules.FiringRecord
}

// Cycle says what one cycle did: its sync and, per due job, its rules.
type Cycle struct {
	Skipped  string        // why nothing ran: stopping, stretched, running, idle
	Sync     *SyncResult   // the cycle's sync, shared by its jobs
	Jobs     []CycleResult // per due job
	Requests int           // every desk request of the cycle: sync, re-reads, actions
}

// count adds the requests behind one desk call and notes the rate state.
func (s *Scheduler) count(cy *cycle, resp *sdclient.Response, err error) {
	n := attempts(resp, err)
	if cy != nil {
		cy.requests += n
	}
	if s.cfg.budget > 0 {
		s.spent.add(s.cfg.clock.Now(), n)
	}
	if resp != nil && resp.Response != nil && resp.Rate.Remaining >= 0 {
		s.m.rateRemaining.Set(float64(resp.Rate.Remaining))
	}
}

// incompleteLevel is the level of a line about an incomplete sync or
// cycle: info when the only cause is a first full sync under way.
func incompleteLevel(err error) slog.Level {
	if onlyFirstSync(err) {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// onlyFirstSync reports whether err is errFirstSync, wrapped, or errors
// joined that all are.
func onlyFirstSync(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		for _, x := range errs {
			if !onlyFirstSync(x) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return onlyFirstSync(e.Unwrap())
	}
	return err == errFirstSync
}

// persistTimeout bounds the save of a cycle's re-read tickets to the mirror.
const persistTimeout = 10 * time.Second

// RunCycle runs one cycle now with every job due, ignoring the schedule
// and the budget's stretch, and waiting for a full sync the mirror needs
// (tests, benchmarks). With an elector it first asks it, and returns
// ErrNotLeader (wrapped) when another replica leads.
func (s *Scheduler) RunCycle(ctx context.Context) (Cycle, error) {
	if s.cfg.elector != nil {
		if err := s.cfg.elector.IsLeader(ctx); err != nil {
			if !errors.Is(err, ErrNotLeader) {
				err = fmt.Errorf("%w: %w", ErrNotLeader, err)
			}
			return Cycle{}, fmt.Errorf("run once: %w", err)
		}
	}
	if _, err := s.currentJobs(ctx); err != nil {
		return Cycle{}, fmt.Errorf("run once: %w", err)
	}
	return s.runCycle(ctx, once), nil
}

// cycleMode says who started a cycle.
type cycleMode int

const (
	// scheduled: gocron's tick. Respects the budget's stretch, runs the
	// jobs whose time has come, skips when a cycle is still running, and
	// leaves a full sync to the background.
	scheduled cycleMode = iota
	// kicked: the first full sync finished; the jobs due and the every
	// jobs that ran on the incomplete mirror run on the whole mirror at
	// once (after a cycle under way), within the budget. A cron job runs
	// only at its time (schedule.go).
	kicked
	// once: RunCycle. Every job, no stretch, waits for a full sync.
	once
)

// RunOnce is RunCycle returning the result of each job.
func (s *Scheduler) RunOnce(ctx context.Context) ([]CycleResult, error) {
	c, err := s.RunCycle(ctx)
	if err != nil {
		return nil, err
	}
	return c.Jobs, nil
}

// runCycle runs one cycle (see cycleMode).
func (s *Scheduler) runCycle(ctx context.Context, mode cycleMode) Cycle {
	tick := s.currentTick()
	if skip := s.cycleGate(ctx, mode, tick); skip != "" {
		return Cycle{Skipped: skip}
	}
	if mode == scheduled {
		if !s.running.TryLock() {
			s.m.skipped.WithLabelValues("cycle", "running").Inc()
			return Cycle{Skipped: "running"}
		}
	} else {
		s.running.Lock()
	}
	defer s.running.Unlock()
	s.inflight.Add(1)
	defer s.inflight.Done()

	s.mu.Lock()
	set, jobs := s.set, s.jobs
	s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.loadRuns(ctx, jobs, now) // schedule.go: restarts and new leaders carry the schedules on
	due := s.dueJobs(jobs, mode, now)
	if len(due) == 0 && !s.ticksDue(set, now) {
		return Cycle{Skipped: "idle"}
	}
	cy := newCycle(now, set, due, s.logger)
	cy.once = mode == once
	// The cycle's writes run on contexts of their own (actionContext); a
	// stop still ends their waits for the rate budget.
	cy.desk = s.desk.Stopping(ctx)
	started := time.Now()

	// 1. Sync the mirror.
	synced := s.sync(ctx, cy, mode == once)
	if synced.Err != nil {
		cy.log.Log(ctx, incompleteLevel(synced.Err), "mirror sync incomplete: rules run on the mirror as it is, no episode ends", slog.Any("error", synced.Err))
	}
	tickets := s.mirrorSnapshot()
	cy.inMirror = make(map[int64]bool, len(tickets))
	for _, t := range tickets {
		cy.inMirror[t.ID] = true
	}

	s.followTick(ctx, now, set, tickets) // digests (followers.go)

	// 2. Evaluate.
	s.lookupPeople(ctx, cy, set, tickets)
	decisions, err := evaluate(ctx, set, cy.rules, tickets, now)
	if err != nil {
		// Stopping: nothing half-evaluated reconciles or acts.
		cy.log.Info("cycle stopped while evaluating the rules", slog.Any("error", err))
		return stoppedCycle(due, synced, err)
	}
	s.noteBudgets(cy, decisions)
	s.noteMatches(cy, decisions) // for the status pages (statusview.go)
	byRule := map[string][]rules.Decision{}
	for _, d := range decisions {
		byRule[d.Rule] = append(byRule[d.Rule], d)
	}
	decisions = s.withBegun(ctx, cy, decisions) // firings under way finish whatever the rules say now

	// 3. Reconcile episodes, per job.
	out := Cycle{Sync: synced}
	for _, j := range due {
		res := CycleResult{Job: j.name, Rules: j.ruleNames(), Complete: synced.Complete, Err: synced.Err, Tickets: len(tickets), Sync: synced}
		for _, r := range j.rules {
			res.Decisions += len(byRule[r.Name])
		}
		if synced.Complete && !s.cfg.dryRun {
			s.reconcile(ctx, cy, j, byRule, &res)
		}
		out.Jobs = append(out.Jobs, res)
	}

	// 4. Execute, by the queue's order, until the next tick is due.
	if mode != once {
		cy.deadline = s.deadline(now)
	}
	before := cy.requests
	s.execute(ctx, cy, decisions)
	cy.execRequests = cy.requests - before
	s.endCycle(ctx, cy, &out, tick, started)
	cy.log.Debug("cycle done", slog.Int("jobs", len(due)), slog.Int("mirrored", len(tickets)),
		slog.Int("changed", synced.Changed), slog.Int("decisions", len(decisions)), slog.Int("requests", cy.requests),
		slog.Bool("complete", synced.Complete))
	return out
}

// cycleGate says why a cycle does not run now ("" when it does): the
// scheduler is stopping, another replica leads (a kicked cycle asks the
// elector, as gocron does before its runs), or the budget stretches the
// tick.
func (s *Scheduler) cycleGate(ctx context.Context, mode cycleMode, tick *job) string {
	if s.stopping.Load() && mode != once {
		return "stopping"
	}
	if mode == kicked && s.cfg.elector != nil {
		if err := s.cfg.elector.IsLeader(ctx); err != nil {
			return "not the leader"
		}
	}
	if mode != once && !s.plan.due(tick, s.cfg.clock.Now()) {
		s.m.skipped.WithLabelValues("cycle", "stretched").Inc()
		s.logger.Debug("cycle skipped to stay within the request budget", slog.Float64("stretch", s.plan.stretch()))
		return "stretched"
	}
	return ""
}

// dueJobs are the jobs a cycle in mode runs at now (see jobDue).
func (s *Scheduler) dueJobs(jobs []*job, mode cycleMode, now time.Time) []*job {
	var due []*job
	for _, j := range jobs {
		if s.jobDue(j, mode, now) {
			due = append(due, j)
		}
	}
	return due
}

// newCycle starts a cycle of the due jobs at now, noting their start.
func newCycle(now time.Time, set *rules.Set, due []*job, log *slog.Logger) *cycle {
	cy := &cycle{
		now: now, set: set, due: due,
		log:     log,
		fresh:   map[int64]*sdclient.Ticket{},
		gone:    map[int64]bool{},
		agents:  map[string]int64{},
		fired:   map[rules.FiringKey]bool{},
		firedBy: map[string]int{},
	}
	inDue := map[string]bool{}
	for _, j := range due {
		for _, r := range j.rules {
			inDue[r.Name] = true
		}
		j.stat.Lock()
		j.lastStart = now
		j.stat.Unlock()
	}
	for _, r := range set.Rules() {
		if inDue[r.Name] {
			cy.rules = append(cy.rules, r)
		}
	}
	return cy
}

// stoppedCycle is the result of a cycle stopped while evaluating.
func stoppedCycle(due []*job, synced *SyncResult, err error) Cycle {
	out := Cycle{Sync: synced, Skipped: "stopping"}
	for _, j := range due {
		out.Jobs = append(out.Jobs, CycleResult{Job: j.name, Rules: j.ruleNames(), Err: err, Skipped: "stopping", Sync: synced})
	}
	return out
}

// endCycle saves what the cycle re-read to the mirror and records each
// job's result, the planner's history and the metrics.
func (s *Scheduler) endCycle(ctx context.Context, cy *cycle, out *Cycle, tick *job, started time.Time) {
	// A local write, finished even when a stop (SIGTERM, Ctrl-C) cancelled
	// the cycle: what it re-read is kept, and a stop logs no warning.
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	perr := s.persistMirrors(pctx)
	pcancel()
	if perr != nil {
		cy.log.Warn("save the tickets re-read in this cycle to the mirror", slog.Any("error", perr))
	}
	out.Requests = cy.requests
	dur := time.Since(started)
	for i, j := range cy.due {
		res := &out.Jobs[i]
		for _, r := range j.rules {
			res.Fired += cy.firedBy[r.Name]
		}
		res.Requests = cy.requests
		res.HeldBack = cy.heldCount(j)
		s.finishJob(j, res, cy.now, dur, cy.requests)
	}
	s.saveRuns(ctx)
	s.plan.record(tick, cy.requests-cy.execRequests, out.Sync.Requests, cy.now)
	s.plan.logChange(s.logger)
	s.m.cycleRequestsAll.Set(float64(cy.requests))
}

// finishJob records a job's cycle in its status and metrics, and sets when
// it is due next.
func (s *Scheduler) finishJob(j *job, res *CycleResult, now time.Time, dur time.Duration, requests int) {
	outcome := "incomplete"
	if res.Complete {
		outcome = "complete"
	}
	s.m.cycles.WithLabelValues(j.name, outcome).Inc()
	s.m.cycleDuration.WithLabelValues(j.name).Observe(dur.Seconds())
	s.m.cycleRequests.WithLabelValues(j.name).Set(float64(requests))
	j.stat.Lock()
	j.lastOutcome, j.lastRequests = outcome, requests
	if res.Complete {
		j.lastComplete = now
		s.m.lastComplete.WithLabelValues(j.name).Set(float64(now.Unix()))
	}
	j.stat.Unlock()
	s.ranJob(j, res.Complete, now)
	if res.HeldBack > 0 {
		// A cap held decisions back: the job runs again at the next tick
		// rather than after its whole interval, so the backlog drains.
		j.dueBy(now.Add(s.tickEvery()))
	}
	if !res.Complete {
		s.logger.Log(context.Background(), incompleteLevel(res.Err), "cycle incomplete: episodes not ended", slog.String("job", j.name), slog.Any("error", res.Err),
			slog.Int("fired", res.Fired))
	}
}

// sortDecisions orders decisions by ticket, then by the rules' file order.
func sortDecisions(set *rules.Set, ds []rules.Decision) {
	order := map[string]int{}
	for i, r := range set.Rules() {
		order[r.Name] = i
	}
	slices.SortStableFunc(ds, func(a, b rules.Decision) int {
		if a.TicketID != b.TicketID {
			if a.TicketID < b.TicketID {
				return -1
			}
			return 1
		}
		return order[a.Rule] - order[b.Rule]
	})
}
