package scheduler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/go-co-op/gocron/v2"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
)

// newPaging is the escalator's paging (nil without an escalator, and in
// a dry run, which pages nobody).
func (s *Scheduler) newPaging() *firing.Paging {
	if s.cfg.escalator == nil || s.cfg.run.DryRun {
		return nil
	}
	return &firing.Paging{Escalator: s.cfg.escalator, Now: s.cfg.clock.Now, Timeout: s.cfg.run.ActionTimeout,
		Ticks: s.m.ticks, Log: s.logger}
}

// TickPages takes the on-call escalation steps due now, as the oncall-tick
// job does every tickEvery on the leader (steps are claimed atomically in
// the store: a replica ticking at the same time pages nobody twice).
func (s *Scheduler) TickPages(ctx context.Context) (oncall.TickStats, error) {
	if s.stopping.Load() {
		return oncall.TickStats{}, errors.New("tick pages: scheduler stopping")
	}
	if s.paging == nil {
		return oncall.TickStats{}, nil
	}
	s.inflight.Add(1)
	defer s.inflight.Done()
	return s.paging.TickNow(ctx)
}

// addTickJob schedules the escalator's tick.
func (s *Scheduler) addTickJob(gs gocron.Scheduler) error {
	if s.paging == nil {
		return nil
	}
	_, err := s.addJob(gs, "oncall-tick", s.cfg.tickEvery, func(ctx context.Context) {
		_, _ = s.TickPages(ctx) // stopping: no tick
	}, s.ticking()...)
	return err
}

// PruneLedger deletes the finished firings older than the retention that
// are no longer the current one of their (rule, ticket), as the scheduled
// prune does every PruneEvery (firing.Prune); it returns how many went.
// It does nothing when pruning is off (and in a dry run).
func (s *Scheduler) PruneLedger(ctx context.Context) (int, error) {
	if s.cfg.retention < 0 || s.cfg.run.DryRun {
		return 0, nil
	}
	return firing.Prune(ctx, s.ledger, s.cfg.retention, s.cfg.clock.Now(), s.m.pruned, s.logger)
}

// addPruneJob schedules PruneLedger. Any replica may prune: the delete is
// one idempotent statement, so the job needs no leader, but gocron asks the
// elector for every job, so in practice the leader prunes.
func (s *Scheduler) addPruneJob(gs gocron.Scheduler) error {
	if s.cfg.retention < 0 || s.cfg.run.DryRun {
		return nil
	}
	_, err := s.addJob(gs, "ledger-prune", PruneEvery, func(ctx context.Context) {
		if _, err := s.PruneLedger(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.logger.Warn("ledger prune failed; retried at the next run", slog.Any("error", err))
		}
	}, gocron.WithSingletonMode(gocron.LimitModeReschedule))
	return err
}

// RuleHealth is the rules' part of /readyz: nil, or which rules went over
// their run-time budget in their last cycle (they are reported, not
// stopped: the other rules keep running).
func (s *Scheduler) RuleHealth(context.Context) error { return s.runner.Memories().Budgets.Health() }
