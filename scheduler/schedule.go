package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/store"
)

// WithRuleRuns keeps the rules' last runs in r. Default: the ledger when
// it is a firing.RuleRuns (*store.Store is), else memory (a restart then starts
// every schedule afresh). A dry run reads r and writes to memory only.
func WithRuleRuns(r firing.RuleRuns) Option { return func(cfg *config) { cfg.runs = r } }

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
			j.Unread(now)
		}
		return
	}
	var fresh []store.RuleRun
	for _, j := range jobs {
		fresh = append(fresh, plan.Unrecorded(j.Rules, runs, now)...)
		if next, ok := j.Load(runs, now); ok && j.Cron != nil {
			// Says at start, after a reload or on becoming the leader when
			// a cron rule runs (the dry run too): not now unless due now.
			for _, r := range j.Rules {
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

// runTimeout bounds the write of a cycle's runs to the store.
const runTimeout = 10 * time.Second

// saveRuns writes the runs of the cycle's jobs in one go, also when a stop
// cancelled the cycle: a restart must not run them again.
func (s *Scheduler) saveRuns(ctx context.Context, runs []store.RuleRun) {
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
		j.Adopt(&o.Schedule)
		o.stat.Lock()
		j.status = o.status
		o.stat.Unlock()
	}
}
