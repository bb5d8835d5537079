package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/go-co-op/gocron/v2"
)

// PruneLedger deletes the finished firings older than the retention that
// are no longer the current one of their (rule, ticket), as the scheduled
// prune does every PruneEvery; it returns how many went. It does nothing
// when pruning is off (and in a dry run). Without pruning the ledger grows
// by one row per firing for ever (every `once: every` repeat, every
// episode).
func (s *Scheduler) PruneLedger(ctx context.Context) (int, error) {
	if s.cfg.retention < 0 || s.cfg.dryRun {
		return 0, nil
	}
	before := s.cfg.clock.Now().Add(-s.cfg.retention)
	n, err := s.ledger.PruneFirings(ctx, before)
	if err != nil {
		return n, fmt.Errorf("prune ledger: %w", err)
	}
	s.m.pruned.Add(float64(n))
	if n > 0 {
		s.logger.Info("ledger pruned", slog.Int("firings", n), slog.Time("before", before))
	}
	return n, nil
}

// addPruneJob schedules PruneLedger. Any replica may prune: the delete is
// one idempotent statement, so the job needs no leader, but gocron asks the
// elector for every job, so in practice the leader prunes.
func (s *Scheduler) addPruneJob(gs gocron.Scheduler) error {
	if s.cfg.retention < 0 || s.cfg.dryRun {
		return nil
	}
	_, err := gs.NewJob(gocron.DurationJob(PruneEvery), gocron.NewTask(func(ctx context.Context) {
		if _, err := s.PruneLedger(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.logger.Warn("ledger prune failed; retried at the next run", slog.Any("error", err))
		}
	}), gocron.WithName("ledger-prune"), gocron.WithContext(s.baseCtx),
		gocron.WithSingletonMode(gocron.LimitModeReschedule))
	if err != nil {
		return fmt.Errorf("add ledger prune job: %w", err)
	}
	return nil
}
