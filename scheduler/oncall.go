package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
)

// DefaultTickEvery is how often the escalator's due steps are taken: the
// delay between a level's wait running out and the next level being paged
// is at most this long.
const DefaultTickEvery = 20 * time.Second

// Escalator is what the scheduler needs of on-call escalation
// (*oncall.Escalator implements it): starting a page for a rule's page
// action, taking due escalation steps, and the reloaded policies.
type Escalator interface {
	// Start begins paging for spec at now; a page with the same key (rule,
	// ticket, episode) is never started twice (created is false then).
	Start(ctx context.Context, spec oncall.PageSpec, now time.Time) (p oncall.Page, created bool, err error)
	// Tick takes every escalation step due at now, each exactly once
	// across replicas.
	Tick(ctx context.Context, now time.Time) (oncall.TickStats, error)
	// SetConfig replaces the schedules and policies (a reloaded rules file).
	SetConfig(c *oncall.Config)
}

// checkPages refuses a rules set with page actions when there is no
// escalator to start the pages.
func checkPages(set *rules.Set, esc Escalator) error {
	if esc != nil {
		return nil
	}
	for _, r := range set.Rules() {
		for _, k := range r.ActionKinds() {
			if k == rules.ActionPage {
				return fmt.Errorf("rule %q pages on-call, but no escalator is configured", r.Name)
			}
		}
	}
	return nil
}

// tickPages takes the escalation steps due now. gocron runs it every
// tickEvery on the leader (with an elector; steps are claimed atomically
// in the store, so a replica ticking at the same time would page nobody
// twice either).
func (s *Scheduler) tickPages(ctx context.Context) (oncall.TickStats, error) {
	esc := s.cfg.escalator
	if esc == nil || s.cfg.dryRun {
		return oncall.TickStats{}, nil
	}
	if !s.ticking.TryLock() {
		return oncall.TickStats{}, nil // the previous tick is still running
	}
	defer s.ticking.Unlock()
	s.inflight.Add(1)
	defer s.inflight.Done()
	// Like a firing's actions, a step under way is not cut in half by a
	// shutdown.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.actionTimeout)
	defer cancel()
	st, err := esc.Tick(tctx, s.cfg.clock.Now())
	s.m.ticks.Inc()
	if err != nil {
		s.logger.Warn("on-call tick had errors; due steps are retried", slog.Any("error", err),
			slog.Int("paged", st.Paged), slog.Int("failed", st.Failed))
	} else if st.Paged+st.Failed+st.Exhausted+st.Noted > 0 {
		s.logger.Info("on-call tick", slog.Int("due", st.Due), slog.Int("paged", st.Paged), slog.Int("failed", st.Failed),
			slog.Int("exhausted", st.Exhausted), slog.Int("noted", st.Noted), slog.Int("lost", st.Lost))
	}
	return st, err
}

// TickPages takes the on-call escalation steps due now, as the scheduled
// tick does (tests, and a caller driving the scheduler by hand).
func (s *Scheduler) TickPages(ctx context.Context) (oncall.TickStats, error) {
	if s.stopping.Load() {
		return oncall.TickStats{}, errors.New("tick pages: scheduler stopping")
	}
	return s.tickPages(ctx)
}

// addTickJob schedules the escalator's tick.
func (s *Scheduler) addTickJob(gs gocron.Scheduler) error {
	if s.cfg.escalator == nil || s.cfg.dryRun {
		return nil
	}
	opts := []gocron.JobOption{gocron.WithName("oncall-tick"), gocron.WithContext(s.baseCtx),
		gocron.WithStartAt(gocron.WithStartImmediately())}
	if s.cfg.singleton {
		opts = append(opts, gocron.WithSingletonMode(gocron.LimitModeReschedule))
	}
	_, err := gs.NewJob(gocron.DurationJob(s.cfg.tickEvery), gocron.NewTask(func(ctx context.Context) {
		if s.stopping.Load() {
			return
		}
		_, _ = s.tickPages(ctx)
	}), opts...)
	if err != nil {
		return fmt.Errorf("add on-call tick job: %w", err)
	}
	return nil
}
