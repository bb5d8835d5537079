package sdclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// A request waiting for rate budget gives up with ErrStopped when its stop
// ends, and is never sent; without a stop it keeps waiting.
func TestStopAbandonsWaitingRequests(t *testing.T) {
	clock := clockwork.NewFakeClock()
	c, mux, _ := setup(t, WithRatePerMinute(2), WithReserve(0), WithClock(clock))
	n := route(t, mux, "GET /agents/me", "", "", 200, `{"agent":{"id":1}}`)
	for range 2 {
		if _, _, err := c.Agents.Me(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	stop, stopNow := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Agents.Me(WithStop(t.Context(), stop))
		done <- err
	}()
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
	// A stop that ended does not touch a context without it.
	go func() { _, _, err := c.Agents.Me(t.Context()); done <- err }()
	queued(t, clock, c.limiter, 1)
	clock.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A request whose context ends while it waits for the client's own rate
// budget says so with ErrBudgetWait (and the context's error), and is
// never sent: the budget, not the desk, held it back.
func TestBudgetWaitIsNotSent(t *testing.T) {
	clock := clockwork.NewFakeClock()
	c, mux, _ := setup(t, WithRatePerMinute(2), WithReserve(0), WithClock(clock))
	n := route(t, mux, "GET /agents/me", "", "", 200, `{"agent":{"id":1}}`)
	for range 2 {
		if _, _, err := c.Agents.Me(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
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
