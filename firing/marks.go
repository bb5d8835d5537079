package firing

import (
	"context"
	"fmt"
	"sync"

	"github.com/deskbot/deskbot/store"
)

// MarksSource is a Ledger that keeps the installation's secret
// (*store.Store): firings sign with its Marks.
type MarksSource interface {
	Marks(ctx context.Context) (*store.Marks, error)
}

// LedgerMarks are the Marks a ledger signs with (Deps.Marks is its Get).
// It is safe for concurrent use.
type LedgerMarks struct {
	ledger any
	mu     sync.Mutex
	m      *store.Marks
}

// MarksOf returns the Marks of ledger: its own when it is a MarksSource
// (read once), else the default key's.
func MarksOf(ledger any) *LedgerMarks { return &LedgerMarks{ledger: ledger} }

// Get returns the Marks to sign and check with.
func (l *LedgerMarks) Get(ctx context.Context) (*store.Marks, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m != nil {
		return l.m, nil
	}
	src, ok := l.ledger.(MarksSource)
	if !ok {
		l.m = store.NewMarks(nil)
		return l.m, nil
	}
	m, err := src.Marks(ctx)
	if err != nil {
		return nil, fmt.Errorf("marks: %w", err)
	}
	l.m = m
	return m, nil
}
