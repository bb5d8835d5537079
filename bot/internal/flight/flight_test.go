package flight

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// flightRun starts a leader running lead and waiters that ask for the same
// key while it runs, and returns what each waiter got and what the leader
// panicked with.
func flightRun(t *testing.T, waiters int, lead func() (string, error)) (got []flightResult, leaderPanic any) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var f Group[string]
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { leaderPanic = recover() }()
			f.Do("k", func() (string, error) {
				<-release
				return lead()
			})
		})
		synctest.Wait() // the leader is in fn
		got = make([]flightResult, waiters)
		for i := range waiters {
			wg.Go(func() {
				v, err := f.Do("k", func() (string, error) {
					t.Error("a waiter ran the lookup itself")
					return "", nil
				})
				got[i] = flightResult{v, err}
			})
		}
		synctest.Wait() // every waiter waits for the leader
		close(release)
		wg.Wait()
		// The key is free again: the next call runs.
		if v, err := f.Do("k", func() (string, error) { return "again", nil }); v != "again" || err != nil {
			t.Errorf("call after the flight = %q, %v", v, err)
		}
	})
	return got, leaderPanic
}

type flightResult struct {
	v   string
	err error
}

// TestFlightSharesFailures: the waiters of a lookup get its answer, its
// error, or an error when it panicked or ended its goroutine, never an
// empty answer and no error.
func TestFlightSharesFailures(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		lead      func() (string, error)
		want      string
		wantErr   string // "" for no error
		wantPanic any
	}{
		{"answer", func() (string, error) { return "alice@example.com", nil }, "alice@example.com", "", nil},
		{"error", func() (string, error) { return "", boom }, "", "boom", nil},
		{"panic", func() (string, error) { panic("agent lookup exploded") }, "", "panic: agent lookup exploded", "agent lookup exploded"},
		{"panic with an error", func() (string, error) { panic(boom) }, "", "panic: boom", boom},
		{"goexit", func() (string, error) { runtime.Goexit(); return "", nil }, "", "ended without an answer", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, p := flightRun(t, 3, tt.lead)
			if p != tt.wantPanic {
				t.Errorf("leader panicked with %v, want %v", p, tt.wantPanic)
			}
			for i, r := range got {
				if r.v != tt.want {
					t.Errorf("waiter %d got %q, want %q", i, r.v, tt.want)
				}
				switch {
				case tt.wantErr == "" && r.err != nil:
					t.Errorf("waiter %d: unexpected error %v", i, r.err)
				case tt.wantErr != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr)):
					t.Errorf("waiter %d: error %v, want one containing %q", i, r.err, tt.wantErr)
				}
			}
			if tt.name == "panic with an error" && !errors.Is(got[0].err, boom) {
				t.Errorf("a panic's error does not unwrap to the panic value: %v", got[0].err)
			}
		})
	}
}
