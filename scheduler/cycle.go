package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// cycle is what the steps of one cycle share and none changes: its time,
// its rules, its logger and the desk as the cycle sees it; and the meter
// of its desk requests (count).
type cycle struct {
	desk     firing.Desk // s.desk, whose waits for the rate budget end with the cycle's ctx
	now      time.Time
	log      *slog.Logger
	set      *rules.Set
	rules    []*rules.Rule // the due jobs' rules, in file order
	once     bool          // RunCycle: every rule, due or not (a plan shows each at its next run)
	requests int
}

// Cycle says what one cycle did: its sync and, per due job, its rules.
type Cycle struct {
	Skipped  string        // why nothing ran: stopping, stretched, running, idle
	Sync     *feed.Synced  // the cycle's sync, shared by its jobs
	Jobs     []CycleResult // per due job
	Requests int           // every desk request of the cycle: sync, re-reads, actions
}

// count adds the requests behind one desk call and notes the rate state.
func (s *Scheduler) count(cy *cycle, resp *sdclient.Response, err error) {
	n := feed.Attempts(resp, err)
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

// runCycle runs one cycle (see cycleMode): the steps in order, each
// passing its result to the next.
func (s *Scheduler) runCycle(ctx context.Context, mode cycleMode) Cycle {
	tick := s.currentTick()
	if skip := s.cycleGate(ctx, mode, tick); skip != "" {
		return Cycle{Skipped: skip}
	}
	if !s.lockCycle(mode) {
		return Cycle{Skipped: "running"}
	}
	defer s.running.Unlock()
	s.inflight.Add(1)
	defer s.inflight.Done()

	cy, due := s.startCycle(ctx, mode)
	if cy == nil {
		return Cycle{Skipped: "idle"}
	}
	started := time.Now()
	synced, tickets := s.syncStep(ctx, cy, mode == once)
	s.followTick(ctx, cy.now, cy.set, tickets) // digests (followers.go)
	s.lookupPeople(ctx, cy, cy.set, tickets)
	p, err := s.planStep(ctx, cy, tickets)
	if err != nil {
		// Stopping: nothing half-evaluated reconciles or acts.
		cy.log.Info("cycle stopped while evaluating the rules", slog.Any("error", err))
		return stoppedCycle(due, synced, err)
	}
	var done outcomes
	if s.cfg.dryRun {
		done = s.dryRun(ctx, cy, p.Ordered) // says what it would have done, executes nothing
	} else {
		done = s.execute(ctx, cy, p, s.pace(mode, cy.now))
	}
	jobs := s.reconcile(ctx, cy, due, p, synced, tickets, done)
	out := s.endCycle(ctx, cy, due, Cycle{Sync: synced, Jobs: jobs}, p, done, tick, started)
	cy.log.Debug("cycle done", slog.Int("jobs", len(due)), slog.Int("mirrored", len(tickets)),
		slog.Int("changed", synced.Changed), slog.Int("decisions", len(p.Decisions)), slog.Int("requests", cy.requests),
		slog.Bool("complete", synced.Complete))
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
// now (nil when nothing is due).
func (s *Scheduler) startCycle(ctx context.Context, mode cycleMode) (*cycle, []*job) {
	s.mu.Lock()
	set, jobs := s.set, s.jobs
	s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.loadRuns(ctx, jobs, now) // schedule.go: restarts and new leaders carry the schedules on
	due := s.dueJobs(jobs, mode, now)
	if len(due) == 0 && !s.ticksDue(set, now) {
		return nil, nil
	}
	cy := newCycle(now, set, due, s.logger)
	cy.once = mode == once
	// The cycle's writes run on contexts of their own (actionContext); a
	// stop still ends their waits for the rate budget.
	cy.desk = s.desk.Stopping(ctx)
	return cy, due
}

// syncStep syncs the mirror and returns the sync's result and the
// mirror's tickets.
func (s *Scheduler) syncStep(ctx context.Context, cy *cycle, inline bool) (*feed.Synced, []*sdclient.Ticket) {
	opts := []feed.SyncOption{feed.Count(func(resp *sdclient.Response, err error) { s.count(cy, resp, err) })}
	if inline {
		opts = append(opts, feed.Inline())
	}
	synced := s.feed.Sync(ctx, opts...) // the feed then tells its subscribers what changed
	if synced.Err != nil {
		cy.log.Log(ctx, feed.IncompleteLevel(synced.Err), "mirror sync incomplete: rules run on the mirror as it is, no episode ends", slog.Any("error", synced.Err))
	}
	return synced, s.feed.Snapshot()
}

// planStep evaluates the due rules on the tickets (pure), notes the
// results for /readyz and the status pages, reads the ledger's view of
// the decisions and plans the cycle (pure: makePlan). It returns ctx's
// error when a stop cut the evaluation short.
func (s *Scheduler) planStep(ctx context.Context, cy *cycle, tickets []*sdclient.Ticket) (*plan.Plan, error) {
	decisions, err := plan.Evaluate(ctx, cy.set, cy.rules, tickets, cy.now)
	if err != nil {
		return nil, err
	}
	s.noteBudgets(cy, decisions)
	s.matches.Note(cy.rules, decisions, cy.now) // for the status pages (Memory)

	var led plan.LedgerView // a dry run reads the ledger itself (dryRun)
	if !s.cfg.dryRun {
		led = firing.ReadView(ctx, s.ledger, cy.set, decisions, cy.log)
	}
	_, groups := s.notifier.(firing.GroupNotifier)
	p := plan.Make(plan.Input{Set: cy.set, Now: cy.now, Decisions: decisions, Ledger: led,
		Since: s.waiting.Since(decisions, led.Begun), DryRun: s.cfg.dryRun, CycleCap: s.cfg.maxFirings, Groups: groups})
	s.notePlan(cy, p)
	return p, nil
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
	cy := &cycle{now: now, set: set, log: log}
	inDue := map[string]bool{}
	for _, j := range due {
		for _, r := range j.Rules {
			inDue[r.Name] = true
		}
		j.stat.Lock()
		j.status.LastStart = now
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
func stoppedCycle(due []*job, synced *feed.Synced, err error) Cycle {
	out := Cycle{Sync: synced, Skipped: "stopping"}
	for _, j := range due {
		out.Jobs = append(out.Jobs, CycleResult{Job: j.name, Rules: j.ruleNames(), Err: err, Skipped: "stopping", Sync: synced})
	}
	return out
}

// endCycle is the record step: it saves what the cycle re-read to the
// mirror, remembers what the cycle held back (for the explainer and the
// queue's age order), and records each job's result, the planner's
// history and the metrics.
func (s *Scheduler) endCycle(ctx context.Context, cy *cycle, due []*job, out Cycle, p *plan.Plan, done outcomes, tick *job, started time.Time) Cycle {
	// A local write, finished even when a stop (SIGTERM, Ctrl-C) cancelled
	// the cycle: what it re-read is kept, and a stop logs no warning.
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	perr := s.feed.Persist(pctx)
	pcancel()
	if perr != nil {
		cy.log.Warn("save the tickets re-read in this cycle to the mirror", slog.Any("error", perr))
	}
	held := plan.MergeHeld(p.Held, done.Held)
	if !s.cfg.dryRun {
		s.held.Note(cy.rules, held)
		s.noteWaiting(cy, held)
	}
	out.Requests = cy.requests
	dur := time.Since(started)
	var runs []store.RuleRun
	for i, j := range due {
		res := &out.Jobs[i]
		for _, r := range j.Rules {
			res.Fired += done.FiredBy[r.Name]
			res.HeldBack += len(held[r.Name])
		}
		res.Requests = cy.requests
		runs = append(runs, s.finishJob(j, res, cy.now, dur, cy.requests)...)
	}
	s.saveRuns(ctx, runs)
	s.plan.record(tick, cy.requests-done.requests, out.Sync.Requests, cy.now)
	s.plan.logChange(s.logger)
	s.m.cycleRequestsAll.Set(float64(cy.requests))
	return out
}

// finishJob records a job's cycle in its status and metrics, sets when it
// is due next and returns its rules' runs to record.
func (s *Scheduler) finishJob(j *job, res *CycleResult, now time.Time, dur time.Duration, requests int) []store.RuleRun {
	outcome := "incomplete"
	if res.Complete {
		outcome = "complete"
	}
	s.m.cycles.WithLabelValues(j.name, outcome).Inc()
	s.m.cycleDuration.WithLabelValues(j.name).Observe(dur.Seconds())
	s.m.cycleRequests.WithLabelValues(j.name).Set(float64(requests))
	j.stat.Lock()
	j.status.LastOutcome, j.status.LastRequests = outcome, requests
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
