package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Cycle says what one cycle did: its sync and, per due job, its rules.
type Cycle = cycle.Out

// count notes a cycle's desk call in the budget's log, and the rate state.
func (s *Scheduler) count(resp *sdclient.Response, err error) {
	if s.cfg.budget > 0 {
		s.spent.add(s.cfg.clock.Now(), feed.Attempts(resp, err))
	}
	if resp != nil && resp.Response != nil && resp.Rate.Remaining >= 0 {
		s.m.rateRemaining.Set(float64(resp.Rate.Remaining))
	}
}

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
func (s *Scheduler) RunOnce(ctx context.Context) ([]cycle.Result, error) {
	c, err := s.RunCycle(ctx) // c is empty on error
	return c.Jobs, err
}

// runCycle runs one cycle (see cycleMode): the gate, the jobs due, the
// cycle's steps (cycle.Runner.Run: sync → plan → execute at the queue's
// pace → reconcile), then the record (endCycle).
func (s *Scheduler) runCycle(ctx context.Context, mode cycleMode) Cycle {
	tick := s.tickEvery() // a reload does not change a cycle under way
	if skip := s.cycleGate(ctx, mode, tick); skip != "" {
		return Cycle{Skipped: skip}
	}
	if !s.lockCycle(mode) {
		return Cycle{Skipped: "running"}
	}
	defer s.running.Unlock()
	s.inflight.Add(1)
	defer s.inflight.Done()

	in, due, ok := s.startCycle(ctx, mode)
	if !ok {
		return Cycle{Skipped: "idle"}
	}
	started := time.Now()
	out := s.runner.Run(ctx, in)
	if out.Skipped != "" {
		return out
	}
	s.endCycle(ctx, due, out, tick, in.Now, started)
	s.logger.Debug("cycle done", slog.Int("jobs", len(due)), slog.Int("mirrored", out.Tickets),
		slog.Int("changed", out.Sync.Changed), slog.Int("decisions", out.Decisions), slog.Int("requests", out.Requests),
		slog.Bool("complete", out.Sync.Complete))
	return out
}

// lockCycle takes the cycle's lock: one cycle runs at a time, and a
// scheduled one is skipped while another runs.
func (s *Scheduler) lockCycle(mode cycleMode) bool {
	if mode != scheduled {
		s.running.Lock()
		return true
	}
	if s.running.TryLock() {
		return true
	}
	s.m.skipped.WithLabelValues("cycle", "running").Inc()
	return false
}

// startCycle reads the rules and jobs, and starts a cycle of the jobs due
// now, noting their start (false: nothing is due). Due are every job in
// RunCycle; in a scheduled cycle the jobs whose time has come; in the cycle
// kicked by a first full sync those and the every jobs whose last run saw
// an incomplete mirror (a cron job's such run left it due).
func (s *Scheduler) startCycle(ctx context.Context, mode cycleMode) (cycle.In, []*job, bool) {
	s.mu.Lock()
	set, jobs := s.set, s.jobs
	s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.loadRuns(ctx, jobs, now) // schedule.go: restarts and new leaders carry the schedules on
	in := cycle.In{Now: now, Set: set, Once: mode == once, Tick: s.tickEvery(), Log: s.logger,
		Fits: s.pace(mode, now).fits, Count: s.count}
	var due []*job
	for _, j := range jobs {
		if mode == once || j.Due(now, s.tickEvery(), mode == kicked) {
			due = append(due, j)
			in.Jobs = append(in.Jobs, cycle.Job{Name: j.name, Rules: j.Rules})
			j.stat.Lock()
			j.status.LastStart = now
			j.stat.Unlock()
		}
	}
	return in, due, len(due) > 0 || s.runner.TicksDue(set, now)
}

// cycleGate says why a cycle does not run now ("" when it does): the
// scheduler is stopping, another replica leads (a kicked cycle asks the
// elector, as gocron does before its runs), or the budget stretches the
// tick.
func (s *Scheduler) cycleGate(ctx context.Context, mode cycleMode, tick time.Duration) string {
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

// endCycle is the record step: each job's result, the planner's history
// and the metrics.
func (s *Scheduler) endCycle(ctx context.Context, due []*job, out cycle.Out, tick time.Duration, now, started time.Time) {
	dur := time.Since(started)
	var runs []store.RuleRun
	for i, j := range due {
		runs = append(runs, s.finishJob(j, &out.Jobs[i], now, dur)...)
	}
	s.saveRuns(ctx, runs)
	s.plan.record(tick, out.Requests-out.Executed, out.Sync.Requests, now)
	s.plan.logChange(s.logger)
	s.m.cycleRequestsAll.Set(float64(out.Requests))
}

// finishJob records a job's cycle in its status and metrics, sets when it
// is due next and returns its rules' runs to record.
func (s *Scheduler) finishJob(j *job, res *cycle.Result, now time.Time, dur time.Duration) []store.RuleRun {
	outcome := "incomplete"
	if res.Complete {
		outcome = "complete"
	}
	s.m.cycles.WithLabelValues(j.name, outcome).Inc()
	s.m.cycleDuration.WithLabelValues(j.name).Observe(dur.Seconds())
	s.m.cycleRequests.WithLabelValues(j.name).Set(float64(res.Requests))
	j.stat.Lock()
	j.status.LastOutcome, j.status.LastRequests = outcome, res.Requests
	if res.Complete {
		j.status.LastComplete = now
		s.m.lastComplete.WithLabelValues(j.name).Set(float64(now.Unix()))
	}
	j.stat.Unlock()
	runs := j.Ran(now, res.Complete)
	if res.HeldBack > 0 {
		// A cap held decisions back: the job runs again at the next tick
		// rather than after its whole interval, so the backlog drains.
		j.DueBy(now.Add(s.tickEvery()))
	}
	if !res.Complete {
		s.logger.Log(context.Background(), feed.IncompleteLevel(res.Err), "cycle incomplete: episodes not ended", slog.String("job", j.name), slog.Any("error", res.Err),
			slog.Int("fired", res.Fired))
	}
	return runs
}
