package sdclient

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// A request waiting for rate budget gives up with ErrStopped when its stop
// ends, and is never sent; without a stop it keeps waiting. The stop is the
// client's (StopWith).
func TestStopAbandonsWaitingRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		me   func(ctx, stop context.Context, c *Client) error
	}{
		{"StopWith", func(ctx, stop context.Context, c *Client) error {
			_, _, err := c.StopWith(stop).Agents.Me(ctx)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clock, n := spentClient(t)
			stop, stopNow := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- tc.me(t.Context(), stop, c) }()
			queued(t, clock, c.limiter, 1)
			stopNow()
			select {
			case err := <-done:
				if !errors.Is(err, ErrStopped) {
					t.Fatalf("err = %v, want ErrStopped", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting request did not give up at the stop")
			}
			if got := n.Load(); got != 2 {
				t.Errorf("%d requests reached the desk, want 2 (the stopped one never sent)", got)
			}
			// A stop that ended does not touch a client or context without it.
			go func() { _, _, err := c.Agents.Me(t.Context()); done <- err }()
			queued(t, clock, c.limiter, 1)
			clock.Advance(time.Minute)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// StopWith keeps the client's kind (interactive or background) and shares
// its limiter; the client it came from keeps no stop.
func TestStopWithSharesTheClient(t *testing.T) {
	c, _, _ := setup(t)
	stop, cancel := context.WithCancel(t.Context())
	cancel()
	s := c.Interactive().StopWith(stop)
	if !s.IsInteractive() || s.limiter != c.limiter || s.httpClient != c.httpClient {
		t.Error("StopWith's client does not share the interactive client's limiter, HTTP client and kind")
	}
	if s.Tickets.client != s || c.stop != nil || c.Interactive().stop != nil {
		t.Error("StopWith's services do not use its client, or the stop leaked into the client it came from")
	}
	if s.Background().stop != stop {
		t.Error("the background twin of a client with a stop lost the stop")
	}
}

// A request whose context ends while it waits for the client's own rate
// budget says so with ErrBudgetWait (and the context's error), and is
// never sent: the budget, not the desk, held it back.
func TestBudgetWaitIsNotSent(t *testing.T) {
	c, _, n := spentClient(t)
	// Real time: the context's deadline ends the wait for budget.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, _, err := c.Agents.Me(ctx)
	if !errors.Is(err, ErrBudgetWait) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrStopped) {
		t.Fatalf("err = %v, want ErrBudgetWait wrapping context.DeadlineExceeded", err)
	}
	if want := "sdclient: get current agent: waiting for rate budget: context deadline exceeded"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d requests reached the desk, want 2", got)
	}
}

// spentClient is a client with a budget of 2 requests a minute on a fake
// clock, both spent on GET /agents/me, whose requests n counts.
func spentClient(t *testing.T) (*Client, *clockwork.FakeClock, *atomic.Int32) {
	t.Helper()
	clock := clockwork.NewFakeClock()
	c, mux, _ := setup(t, WithRatePerMinute(2), WithReserve(0), WithClock(clock))
	n := route(t, mux, "GET /agents/me", "", "", 200, `{"agent":{"id":1}}`)
	for range 2 {
		if _, _, err := c.Agents.Me(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return c, clock, n
}
