// Package history keeps how the desk's tickets looked over time, as the change feed saw them, so that a rules
// file can be replayed over last week (deskbot rules backtest).
package history

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Record is one ticket as the feed saw it from At on: the rule-relevant fields only (no description, no
// conversations, no people's names).
type Record struct {
	At     time.Time        // when the feed applied the change (the ticket's updated_at; the full sync's time for the starting state)
	Ticket *sdclient.Ticket // rule-relevant fields: ID, status, priority, source, agent, group, department,
	// requester id, workspace, type, category/sub_category/item_category, tags, custom
	// fields, due_by, fr_due_by, created_at, updated_at, subject (templates use it)
	Gone bool // the ticket left the desk (deleted, spam) or the mirror at At
}

// Reader reads the recorded history.
type Reader interface {
	// Start is when the recorded history begins (zero time: nothing recorded).
	Start(ctx context.Context) (time.Time, error)
	// Scan calls fn for each record with from <= At < to, ordered by At then ticket id; fn's error stops it.
	Scan(ctx context.Context, from, to time.Time, fn func(Record) error) error
}

// Memory is an in-memory Reader (tests, and the backtest's replay of a store read once).
type Memory struct {
	mu      sync.Mutex
	records []Record
	sorted  bool
}

// Add appends r; records may come in any order.
func (m *Memory) Add(r Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, r)
	m.sorted = false
}

// Start is the earliest record's At (zero time: none).
func (m *Memory) Start(ctx context.Context) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sortLocked()
	if len(m.records) == 0 {
		return time.Time{}, nil
	}
	return m.records[0].At, nil
}

// Scan calls fn for each record with from <= At < to, ordered by At then ticket id. fn runs without the lock
// held, over the records present when Scan began.
func (m *Memory) Scan(ctx context.Context, from, to time.Time, fn func(Record) error) error {
	m.mu.Lock()
	m.sortLocked()
	lo := sort.Search(len(m.records), func(i int) bool { return !m.records[i].At.Before(from) })
	hi := sort.Search(len(m.records), func(i int) bool { return !m.records[i].At.Before(to) })
	var recs []Record
	if lo < hi {
		recs = append(recs, m.records[lo:hi]...) // a copy: a later Add may sort the slice under us
	}
	m.mu.Unlock()
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (m *Memory) sortLocked() {
	if m.sorted {
		return
	}
	sort.SliceStable(m.records, func(i, j int) bool {
		a, b := m.records[i], m.records[j]
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return ticketID(a) < ticketID(b)
	})
	m.sorted = true
}

func ticketID(r Record) int64 {
	if r.Ticket == nil {
		return 0
	}
	return r.Ticket.ID
}
