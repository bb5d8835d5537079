package scheduler

import (
	"context"
	"fmt"

	"github.com/deskbot/deskbot/store"
)

// MarksSource is a Ledger that keeps the installation's secret
// (*store.Store): the scheduler signs with its Marks unless WithMarks
// gives others.
type MarksSource interface {
	Marks(ctx context.Context) (*store.Marks, error)
}

// marks returns the Marks to sign and check with: WithMarks', else the
// ledger's (read once), else the default key's.
func (s *Scheduler) marks(ctx context.Context) (*store.Marks, error) {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	if s.marksV != nil {
		return s.marksV, nil
	}
	src, ok := s.ledger.(MarksSource)
	if !ok {
		s.marksV = store.NewMarks(nil)
		return s.marksV, nil
	}
	m, err := src.Marks(ctx)
	if err != nil {
		return nil, fmt.Errorf("marks: %w", err)
	}
	s.marksV = m
	return m, nil
}
