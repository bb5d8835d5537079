package oncall

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"
)

// PageStore keeps pages durably. Every method must be atomic across the
// processes sharing the store: SwapPage is the compare-and-swap through
// which every step is claimed exactly once, even by replicas ticking at the
// same instant. store.Store implements it on SQLite and PostgreSQL.
type PageStore interface {
	// CreatePage stores p (version 1) unless a page with its key exists;
	// created is false then, and nothing changes.
	CreatePage(ctx context.Context, p Page) (created bool, err error)
	// Page reads the page key; ok is false if there is none.
	Page(ctx context.Context, key string) (p Page, ok bool, err error)
	// DuePages returns up to limit pages that are not Done and whose NextAt
	// is at or before now, earliest first.
	DuePages(ctx context.Context, now time.Time, limit int) ([]Page, error)
	// SwapPage replaces the stored page p.Key with p if the stored version
	// is still p.Version, and then stores version p.Version+1. swapped is
	// false (and nothing changes) when someone else changed the page first.
	SwapPage(ctx context.Context, p Page) (swapped bool, err error)
	// TicketPages returns the pages of a ticket, newest first.
	TicketPages(ctx context.Context, ticketID int64) ([]Page, error)
}

// ErrNoPage is returned (wrapped) for a page key the store does not hold.
var ErrNoPage = errors.New("no such page")

// MemStore is an in-memory PageStore for tests and single-process dry runs.
// The zero value is ready to use.
type MemStore struct {
	mu    sync.Mutex
	pages map[string]Page
}

var _ PageStore = (*MemStore)(nil)

// CreatePage implements PageStore.
func (m *MemStore) CreatePage(_ context.Context, p Page) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pages == nil {
		m.pages = map[string]Page{}
	}
	if _, ok := m.pages[p.Key]; ok {
		return false, nil
	}
	p = p.Clone()
	p.Version = 1
	m.pages[p.Key] = p
	return true, nil
}

// Page implements PageStore.
func (m *MemStore) Page(_ context.Context, key string) (Page, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pages[key]
	return p.Clone(), ok, nil
}

// DuePages implements PageStore.
func (m *MemStore) DuePages(_ context.Context, now time.Time, limit int) ([]Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Page
	for _, p := range m.pages {
		if p.Due(now) {
			out = append(out, p.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].NextAt.Equal(out[j].NextAt) {
			return out[i].NextAt.Before(out[j].NextAt)
		}
		return out[i].Key < out[j].Key
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// SwapPage implements PageStore.
func (m *MemStore) SwapPage(_ context.Context, p Page) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.pages[p.Key]
	if !ok {
		return false, ErrNoPage
	}
	if cur.Version != p.Version {
		return false, nil
	}
	p = p.Clone()
	p.Version++
	m.pages[p.Key] = p
	return true, nil
}

// TicketPages implements PageStore.
func (m *MemStore) TicketPages(_ context.Context, ticketID int64) ([]Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Page
	for _, p := range m.pages {
		if p.TicketID == ticketID {
			out = append(out, p.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].Key > out[j].Key
	})
	return out, nil
}
