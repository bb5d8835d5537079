package slackchat

import (
	"context"
	"sync"
	"time"
)

// EnvelopeStore remembers delivered envelope ids so that a redelivery is
// dropped. The store package implements it durably (shared by replicas);
// MemoryEnvelopes is the in-process version.
type EnvelopeStore interface {
	// SeenEnvelope records id at now and reports whether it had already
	// been recorded within ttl.
	SeenEnvelope(ctx context.Context, id string, now time.Time, ttl time.Duration) (duplicate bool, err error)
}

// MemoryEnvelopes is an in-memory EnvelopeStore for tests and the console.
// The zero value is ready to use.
type MemoryEnvelopes struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

var _ EnvelopeStore = (*MemoryEnvelopes)(nil)

// SeenEnvelope implements EnvelopeStore; it also forgets expired ids.
func (m *MemoryEnvelopes) SeenEnvelope(_ context.Context, id string, now time.Time, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = make(map[string]time.Time)
	}
	if len(m.seen) > 1024 {
		for k, at := range m.seen {
			if now.Sub(at) > ttl {
				delete(m.seen, k)
			}
		}
	}
	if at, ok := m.seen[id]; ok && now.Sub(at) <= ttl {
		return true, nil
	}
	m.seen[id] = now
	return false, nil
}
