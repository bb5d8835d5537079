package scheduler

import (
	"context"

	"github.com/deskbot/deskbot/feed"
)

// The change feed and the mirror live in package feed; this file is the
// scheduler's side of it: the feed it builds, wired to its context,
// leadership and kicked cycles, and the names others know them by.

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
