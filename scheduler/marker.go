package scheduler

import (
	"context"
	"fmt"
	"strings"

	"github.com/deskbot/deskbot/store"
)

// Every note and reply a firing writes ends with the mark of its marker
// (store.Marks.FiringTag): 64 bits of an HMAC keyed with the
// installation's secret, in invisible characters that HTML sanitisers keep
// as text. A resumed firing finds its own note by that mark alone, on a
// desk that drops the marker's HTML comment as on one that keeps it; the
// comment, which anyone writing on the ticket could type (a requester's
// e-mail reply), proves nothing. An identical note of another rule or
// firing never passes for it either.
const (
	tagEdge = '\u2060' // word joiner
	tagZero = '\u200b' // zero width space
	tagOne  = '\u200c' // zero width non-joiner
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

// hasAnyTag reports whether s carries a mark of any firing (or thread).
func hasAnyTag(s string) bool { return strings.ContainsRune(s, tagEdge) }

// dropTags removes the invisible tag characters from s (for comparing the
// text of a note with what a rule wrote).
func dropTags(s string) string {
	return strings.Map(func(r rune) rune {
		if r == tagEdge || r == tagZero || r == tagOne {
			return -1
		}
		return r
	}, s)
}
