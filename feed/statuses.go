package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// statusCache holds the desk's open statuses for the status:open macro
// and the full sync's queries.
type statusCache struct {
	mu      sync.Mutex
	open    []int
	known   map[int]bool
	fetched time.Time
	stale   bool
}

// OpenStatuses returns the desk's open statuses, re-reading them when
// force, when they are older than the refresh interval or when a ticket
// showed an unknown one. A failed refresh keeps the old ones when there
// are any. sent, when not nil, is called once when a request went out.
func (f *Feed) OpenStatuses(ctx context.Context, force bool) ([]int, error) {
	return f.openStatuses(ctx, force, nil)
}

func (f *Feed) openStatuses(ctx context.Context, force bool, sent func()) ([]int, error) {
	c := &f.statuses
	c.mu.Lock()
	defer c.mu.Unlock()
	now := f.cfg.clock.Now()
	if !force && c.open != nil && !c.stale && now.Sub(c.fetched) < f.cfg.statusRefresh {
		return c.open, nil
	}
	open, err := f.desk.OpenStatuses(ctx)
	if sent != nil {
		sent()
	}
	if err != nil {
		if c.open != nil {
			f.cfg.logger.Warn("refresh open statuses failed; keeping the known ones", slog.Any("error", err))
			return c.open, nil
		}
		return nil, fmt.Errorf("read open statuses: %w", err)
	}
	if len(open) == 0 {
		return nil, errors.New("read open statuses: the desk has no open status")
	}
	open = slices.Clone(open)
	slices.Sort(open)
	if c.open != nil && !slices.Equal(open, c.open) {
		f.cfg.logger.Info("open statuses changed", slog.Any("before", c.open), slog.Any("now", open))
	}
	c.open, c.fetched, c.stale = open, now, false
	c.known = make(map[int]bool, len(open))
	for _, id := range open {
		c.known[id] = true
	}
	return c.open, nil
}

// KnownStatuses are the open statuses last read, nil before the first.
func (f *Feed) KnownStatuses() []int {
	c := &f.statuses
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// statusesStale reports whether a ticket showed an open status the cache
// lacks.
func (f *Feed) statusesStale() bool {
	c := &f.statuses
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stale
}

// NoticeStatus marks the statuses stale when t shows an open status the
// cache does not know (a custom status added since the last read), so
// that the next sync re-reads them, and reports whether it did.
func (f *Feed) NoticeStatus(t *sdclient.Ticket) bool {
	if t == nil || !sdclient.IsOpenStatus(t.Status) {
		return false
	}
	c := &f.statuses
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil || c.known[t.Status] {
		return false
	}
	c.stale = true
	return true
}
