package scheduler

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/store"
)

// Time rules run at their time. Each rule's last run is kept in the state
// store (RuleRuns), read in every cycle before the due jobs are chosen (so
// at start, after a reload and when this replica gains the leadership) and
// written when a job's run completes. A job's next run is plan.NextRun over its
// rules' records; within a process it then follows its own runs (an every
// job an interval after its previous due time, a cron job at its next
// time), until another replica's run shows in the store.

// RuleRuns keeps when each rule last ran (*store.Store implements it;
// store/storetest checks it on SQLite and PostgreSQL).
type RuleRuns interface {
	RuleRunReader
	// SetRuleRuns records runs: under the recorded schedule, Since stays
	// the first and LastRun only moves forward; under another schedule a
	// run replaces the record.
	SetRuleRuns(ctx context.Context, runs ...store.RuleRun) error
}

// RuleRunReader reads when each rule last ran: explanations and plans
// read it to say when a rule runs next (plan.NextRun).
type RuleRunReader interface {
	// RuleRuns returns the record of every rule that has one, by name.
	RuleRuns(ctx context.Context) (map[string]store.RuleRun, error)
}

// WithRuleRuns keeps the rules' last runs in r. Default: the ledger when
// it is a RuleRuns (*store.Store is), else memory (a restart then starts
// every schedule afresh). A dry run reads r and writes to memory only.
func WithRuleRuns(r RuleRuns) Option { return func(cfg *config) { cfg.runs = r } }

// ruleRunsFor is where the rules' runs are kept: r, else the ledger when it
// keeps them, else memory; a dry run keeps its own in memory over them.
func ruleRunsFor(r RuleRuns, ledger any, dry bool) RuleRuns {
	if r == nil {
		r, _ = ledger.(RuleRuns)
	}
	if r == nil {
		return &memRuleRuns{}
	}
	if dry {
		return &memRuleRuns{base: r}
	}
	return r
}

// memRuleRuns keeps runs in memory, over the records of base (nil: none).
type memRuleRuns struct {
	base RuleRunReader
	mu   sync.Mutex
	runs map[string]store.RuleRun
}

func (m *memRuleRuns) RuleRuns(ctx context.Context) (map[string]store.RuleRun, error) {
	out := map[string]store.RuleRun{}
	if m.base != nil {
		base, err := m.base.RuleRuns(ctx)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, base)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, r := range m.runs {
		if old, ok := out[name]; ok {
			r = plan.MergeRun(old, r)
		}
		out[name] = r
	}
	return out, nil
}

func (m *memRuleRuns) SetRuleRuns(_ context.Context, runs ...store.RuleRun) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string]store.RuleRun{}
	}
	for _, r := range runs {
		if old, ok := m.runs[r.Rule]; ok {
			r = plan.MergeRun(old, r)
		}
		m.runs[r.Rule] = r
	}
	return nil
}

// loadRuns brings the jobs' schedules up to date with the store: a job
// this process has not scheduled yet, or one that another replica ran
// since (a new leader), takes its next run from plan.NextRun; the rules the
// store has no record of (under their schedule) are recorded as scheduled
// from now.
func (s *Scheduler) loadRuns(ctx context.Context, jobs []*job, now time.Time) {
	runs, err := s.runs.RuleRuns(ctx)
	if err != nil {
		s.logger.Warn("cannot read when the rules last ran; their schedules go on from what this process knows", slog.Any("error", err))
		for _, j := range jobs {
			j.stat.Lock()
			if j.next.IsZero() {
				// As if never run: no cron rule fires for being new. The
				// next read that works schedules it properly.
				j.next = plan.FirstNextRun(j.rules, nil, now)
			}
			j.stat.Unlock()
		}
		return
	}
	var fresh []store.RuleRun
	for _, j := range jobs {
		fresh = append(fresh, plan.Unrecorded(j.rules, runs, now)...)
		if next, ok := j.apply(runs, now); ok && j.sched != nil {
			// Says at start, after a reload or on becoming the leader when
			// a cron rule runs (the dry run too): not now unless due now.
			for _, r := range j.rules {
				s.logger.Info("time rule scheduled", slog.String("rule", r.Name), slog.String("next_run", plan.NextRunText(r, next, now)))
			}
		}
	}
	if len(fresh) > 0 {
		if err := s.runs.SetRuleRuns(ctx, fresh...); err != nil {
			s.logger.Warn("cannot record when the new time rules were first scheduled", slog.Any("error", err))
		}
	}
}

// apply takes j's schedule from the records runs when this process has
// not scheduled j yet or another replica ran it since, and returns its
// next run then (ok).
func (j *job) apply(runs map[string]store.RuleRun, now time.Time) (next time.Time, ok bool) {
	last := plan.LastRun(j.rules, runs)
	j.stat.Lock()
	defer j.stat.Unlock()
	if j.loaded && !last.After(j.last) {
		return j.next, false // nothing new: this process's own schedule stands
	}
	j.loaded = true
	j.last = plan.Later(j.last, last)
	j.next = plan.FirstNextRun(j.rules, runs, now)
	return j.next, true
}

// jobDue reports whether a cycle in mode runs j at now: every job in
// RunCycle; in a scheduled cycle the jobs whose time has come; in the cycle
// kicked by a first full sync those and the every jobs whose last run saw
// an incomplete mirror (a cron job's such run left it due).
func (s *Scheduler) jobDue(j *job, mode cycleMode, now time.Time) bool {
	if mode == once {
		return true
	}
	tick := s.tickEvery()
	if j.dueAt(now, tick) {
		return true
	}
	j.stat.Lock()
	defer j.stat.Unlock()
	return mode == kicked && j.sched == nil && j.incomplete
}

// dueAt reports whether j's time has come at now; tick/2 absorbs the
// tick's lateness. A job not scheduled yet is not due. A cron time further
// back than the job's catch-up window (the process was paused, or led
// again after a gap that no other replica filled) is skipped for the next.
func (j *job) dueAt(now time.Time, tick time.Duration) bool {
	j.stat.Lock()
	defer j.stat.Unlock()
	if j.next.IsZero() || now.Before(j.next.Add(-tick/2)) {
		return false
	}
	if j.sched != nil && now.Sub(j.next) > plan.CatchUp(j.rules, tick) {
		j.next = j.sched.Next(now.UTC())
		return false
	}
	return true
}

// scheduleNext sets when j is due after a run at now: every interval from
// the previous due time (a late tick is paid back; an early, unscheduled
// run starts the interval over), or the cron's next time.
func (j *job) scheduleNext(now time.Time) {
	j.stat.Lock()
	defer j.stat.Unlock()
	if j.sched != nil {
		j.next = j.sched.Next(now.UTC())
		return
	}
	base := j.next
	if base.IsZero() || now.Sub(base) > j.every || base.After(now) {
		base = now
	}
	j.next = base.Add(j.every)
}

// dueBy makes j due at t at the latest.
func (j *job) dueBy(t time.Time) {
	j.stat.Lock()
	defer j.stat.Unlock()
	if j.next.IsZero() || t.Before(j.next) {
		j.next = t
	}
}

// ranJob records j's run at now: its next run, and its rules' last run,
// which saveRuns writes to the store with the cycle's other jobs. A cron
// run on an incomplete mirror (a first full sync under way, a failing
// desk) is not the run of its time: it records nothing and the job stays
// due, so the next cycles run it again within its catch-up window.
func (s *Scheduler) ranJob(j *job, complete bool, now time.Time) {
	if j.sched != nil && !complete {
		return
	}
	j.scheduleNext(now)
	j.stat.Lock()
	j.last, j.loaded, j.incomplete = plan.Later(j.last, now), true, !complete
	j.stat.Unlock()
	s.unsaved.Lock()
	defer s.unsaved.Unlock()
	for _, r := range j.rules {
		s.unsaved.runs = append(s.unsaved.runs, store.RuleRun{Rule: r.Name, Schedule: plan.ScheduleKey(r), Since: now, LastRun: now})
	}
}

// runTimeout bounds the write of a cycle's runs to the store.
const runTimeout = 10 * time.Second

// unsavedRuns are the runs of a cycle's jobs not written yet.
type unsavedRuns struct {
	sync.Mutex
	runs []store.RuleRun
}

// saveRuns writes the runs of the cycle's jobs in one go, also when a stop
// cancelled the cycle: a restart must not run them again.
func (s *Scheduler) saveRuns(ctx context.Context) {
	s.unsaved.Lock()
	runs := s.unsaved.runs
	s.unsaved.runs = nil
	s.unsaved.Unlock()
	if len(runs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runTimeout)
	defer cancel()
	if err := s.runs.SetRuleRuns(ctx, runs...); err != nil {
		s.logger.Warn("cannot record the rules' runs: a restart may run them again", slog.Any("error", err))
	}
}

// adoptJobs carries the schedule and status of old jobs over to the new
// jobs of the same query and schedule (Start after RunCycle, a reload):
// a rule is never due because its job was rebuilt.
func adoptJobs(old, jobs []*job) {
	byKey := make(map[string]*job, len(old))
	for _, j := range old {
		byKey[j.key] = j
	}
	for _, j := range jobs {
		o := byKey[j.key]
		if o == nil {
			continue
		}
		o.stat.Lock()
		j.next, j.last, j.loaded, j.incomplete = o.next, o.last, o.loaded, o.incomplete
		j.lastStart, j.lastComplete, j.lastOutcome, j.lastRequests = o.lastStart, o.lastComplete, o.lastOutcome, o.lastRequests
		o.stat.Unlock()
	}
}
