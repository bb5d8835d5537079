package scheduler

import (
	"context"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/sdclient"
)

// The change feed and the mirror live in package feed; this file is the
// scheduler's side of it: the feed it builds, a cycle's sync, and the
// names the rest of the scheduler knows them by.

// SyncResult says what the sync step of a cycle did.
type SyncResult = feed.Synced

// FullSyncProgress is the progress of one workspace's full sync.
type FullSyncProgress = feed.FullSyncProgress

// MirrorStore keeps the ticket mirror durable (*store.Store implements
// it). Without one (New's ledger is not a MirrorStore and WithFeed gives
// no feed.WithMirrorStore) the mirror lives in memory only.
type MirrorStore = feed.MirrorStore

// MirrorStatus is the state of one workspace's ticket mirror.
type MirrorStatus = feed.Status

// newFeed builds the scheduler's feed from its configuration.
func (s *Scheduler) newFeed(cfg config) (*feed.Feed, error) {
	opts := []feed.Option{
		feed.WithLogger(s.logger),
		feed.WithClock(cfg.clock),
		feed.WithMirrorStore(mirrorStoreFor(s.ledger)),
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
	opts = append(opts, cfg.feed...) // WithFeed: workspaces, mirror store, intervals
	for _, sub := range cfg.followers.subscribers {
		opts = append(opts, feed.WithSubscriber(sub))
	}
	return feed.New(s.desk, opts...)
}

// Feed is the scheduler's change feed and mirror (for LiveMirror.Attach).
func (s *Scheduler) Feed() *feed.Feed { return s.feed }

// sync is the cycle's sync step: the feed's requests count in the cycle
// and the budget; the feed then tells its subscribers what it changed.
func (s *Scheduler) sync(ctx context.Context, cy *cycle, inline bool) *SyncResult {
	opts := []feed.SyncOption{feed.Count(func(resp *sdclient.Response, err error) { s.count(cy, resp, err) })}
	if inline {
		opts = append(opts, feed.Inline())
	}
	return s.feed.Sync(ctx, opts...)
}

// mirrorStoreFor is where the mirror is kept unless WithFeed says: the
// ledger when it keeps mirrors too (*store.Store does), else memory.
func mirrorStoreFor(ledger any) MirrorStore {
	if ms, ok := ledger.(MirrorStore); ok {
		return ms
	}
	return feed.NewMemStore()
}

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

// mirrorSnapshot returns the tickets of every workspace's mirror, by id.
func (s *Scheduler) mirrorSnapshot() []*sdclient.Ticket { return s.feed.Snapshot() }

// persistMirrors saves what the cycle changed in the mirrors.
func (s *Scheduler) persistMirrors(ctx context.Context) error { return s.feed.Persist(ctx) }

// attempts is how many requests one desk call sent.
func attempts(resp *sdclient.Response, err error) int { return feed.Attempts(resp, err) }
