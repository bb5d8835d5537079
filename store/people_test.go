package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// People first (issue 22): the envelope check every Slack command waits on
// does not queue behind the scheduler's use of the store. Here the
// scheduler's connection is held by a read left open (as a long cycle
// holds it); before the check had a connection of its own it waited until
// that ended.
func TestSeenEnvelopeDoesNotQueueBehindTheScheduler(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "state.db"))
	rows, err := s.db.QueryContext(t.Context(), `SELECT name FROM poll_cursors`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close() // holds the scheduler's only connection until then

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	if dup, err := s.SeenEnvelope(ctx, "env-1", t0, time.Hour); err != nil || dup {
		t.Fatalf("SeenEnvelope while the scheduler's connection is busy = %v, %v; want a first sight at once", dup, err)
	}
	if dup, err := s.SeenEnvelope(ctx, "env-1", t0.Add(time.Second), time.Hour); err != nil || !dup {
		t.Fatalf("SeenEnvelope of a redelivery = %v, %v; want a duplicate", dup, err)
	}
}
