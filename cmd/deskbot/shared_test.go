package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedRead: callers within the freshness share one read, also when
// they ask at once; a failure is not kept; an old answer is read again; a
// caller whose context ends stops waiting for another's read.
func TestSharedRead(t *testing.T) {
	now := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	var reads atomic.Int32
	fail := false
	release := make(chan struct{})
	close(release)
	gate := release
	s := newShared(10*time.Second, func() time.Time { return now }, func(ctx context.Context) (int, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		n := int(reads.Add(1))
		if fail {
			return 0, errors.New("desk down")
		}
		return n, nil
	})
	steps := []struct {
		name      string
		advance   time.Duration
		fail      bool
		callers   int
		want      int
		wantReads int32
		wantErr   bool
	}{
		{name: "first read", callers: 1, want: 1, wantReads: 1},
		{name: "ten callers at once, fresh", advance: 9 * time.Second, callers: 10, want: 1, wantReads: 1},
		{name: "stale: read again", advance: time.Second, callers: 1, want: 2, wantReads: 2},
		{name: "failure is said", advance: 11 * time.Second, fail: true, callers: 1, wantReads: 3, wantErr: true},
		{name: "and not kept", fail: false, callers: 3, want: 4, wantReads: 4},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		fail = st.fail
		var wg sync.WaitGroup
		got := make([]int, st.callers)
		errs := make([]error, st.callers)
		for i := range st.callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = s.get(t.Context())
			}()
		}
		wg.Wait()
		for i := range st.callers {
			if (errs[i] != nil) != st.wantErr || (!st.wantErr && got[i] != st.want) {
				t.Errorf("%s: caller %d got %d, %v; want %d (error %v)", st.name, i, got[i], errs[i], st.want, st.wantErr)
			}
		}
		if n := reads.Load(); n != st.wantReads {
			t.Errorf("%s: %d reads in all, want %d", st.name, n, st.wantReads)
		}
	}

	// A read under way holds the others; a caller may give up waiting.
	now = now.Add(time.Minute)
	gate = make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); _, _ = s.get(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting caller: %v, want its deadline", err)
	}
	close(gate)
	<-done
}
