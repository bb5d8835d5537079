package sdclient

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// queued waits until n requests are queued in l and each has set its timer
// on the fake clock: only then may a test advance the clock, or a timer
// set after the advance would count its wait from the new time (and a
// test wait forever). Every request that waits for budget sets one timer
// and no other code of these tests sets any, so n timers mean n waiting
// requests.
func queued(t *testing.T, clock *clockwork.FakeClock, l *limiter, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, n); err != nil {
		t.Fatalf("%d queued requests did not all set a timer: %v", n, err)
	}
	if got := l.waiting(); got != n {
		t.Fatalf("%d requests queued, want %d", got, n)
	}
}

// acquireAsync starts an acquire and reports its result on the channel.
func acquireAsync(ctx context.Context, l *limiter, interactive bool) chan error {
	ch := make(chan error, 1)
	go func() { _, err := l.acquire(ctx, interactive, 1); ch <- err }()
	return ch
}

func mustAcquireNow(t *testing.T, l *limiter, interactive bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := l.acquire(ctx, interactive, 1); err != nil {
		t.Fatalf("acquire(interactive=%v) did not go at once: %v", interactive, err)
	}
}

func TestLimiterReserveKeptForInteractive(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, 10, 2, time.Minute)
	for range 8 {
		mustAcquireNow(t, l, false)
	}
	bg := acquireAsync(t.Context(), l, false)
	queued(t, clock, l, 1)
	// Background has used its share: interactive requests still go at once,
	// without the clock moving.
	mustAcquireNow(t, l, true)
	mustAcquireNow(t, l, true)
	ctx, cancel := context.WithCancel(t.Context())
	in := acquireAsync(ctx, l, true)
	queued(t, clock, l, 2)
	select {
	case err := <-bg:
		t.Fatalf("background went beyond its share: %v", err)
	case err := <-in:
		t.Fatalf("interactive went beyond the budget: %v", err)
	default:
	}
	cancel()
	if err := <-in; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	queued(t, clock, l, 1)
	clock.Advance(time.Minute)
	if err := <-bg; err != nil {
		t.Fatal(err)
	}
}

func TestLimiterInteractiveServedFirst(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, 10, 0, time.Minute) // same limit for both: order decides
	for range 10 {
		mustAcquireNow(t, l, false)
		clock.Advance(time.Second)
	}
	// Window full (one request at each of t=0..9s). A background request
	// queues first, then an interactive one.
	bg := acquireAsync(t.Context(), l, false)
	queued(t, clock, l, 1)
	in := acquireAsync(t.Context(), l, true)
	queued(t, clock, l, 2)
	clock.Advance(50 * time.Second) // t=60s: the t=0 request leaves the window: one slot
	if err := <-in; err != nil {
		t.Fatal(err)
	}
	select {
	case <-bg:
		t.Fatal("background was served although an interactive request waited for the only slot")
	default:
	}
	queued(t, clock, l, 1) // background has set its timer for the next slot
	clock.Advance(time.Second)
	if err := <-bg; err != nil {
		t.Fatal(err)
	}
}

func TestLimiterSlidingWindowProperties(t *testing.T) {
	const (
		rate, reserve = 10, 3
		window        = time.Minute
	)
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, rate, reserve, window)
	type grant struct {
		at          time.Time
		interactive bool
	}
	var (
		mu     sync.Mutex
		grants []grant
		exited = make(chan struct{}, 5)
		wg     sync.WaitGroup
	)
	worker := func(interactive bool, n int) {
		defer wg.Done()
		defer func() { exited <- struct{}{} }()
		for range n {
			at, err := l.acquire(t.Context(), interactive, 1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			grants = append(grants, grant{at, interactive})
			mu.Unlock()
		}
	}
	for i := range 5 {
		wg.Add(1)
		go worker(i < 2, 12)
	}
	// Drive the fake clock: whenever every live worker waits (has set its
	// timer), move on 1s; a worker that is done says so on exited.
	for live := 5; live > 0; {
		ctx, cancel := context.WithCancel(t.Context())
		blocked := make(chan error, 1)
		n := live
		go func() { blocked <- clock.BlockUntilContext(ctx, n) }()
		select {
		case <-exited:
			live--
			cancel()
			<-blocked
		case err := <-blocked:
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
		case <-time.After(20 * time.Second):
			t.Fatal("workers did not finish")
		}
		cancel()
	}
	wg.Wait()
	if len(grants) != 60 {
		t.Fatalf("%d grants", len(grants))
	}
	sort.Slice(grants, func(i, j int) bool { return grants[i].at.Before(grants[j].at) })
	for i, g := range grants {
		total, bg := 0, 0
		for _, h := range grants[:i+1] {
			if g.at.Sub(h.at) < window {
				total++
				if !h.interactive {
					bg++
				}
			}
		}
		if total > rate {
			t.Fatalf("%d requests in the window ending %v, budget %d", total, g.at, rate)
		}
		if bg > rate-reserve {
			t.Fatalf("%d background requests in the window ending %v, share %d", bg, g.at, rate-reserve)
		}
	}
	// The budget was actually used: 60 requests at 10/min need > 5 minutes.
	span := grants[len(grants)-1].at.Sub(grants[0].at)
	if span < 5*time.Minute || span > 7*time.Minute {
		t.Errorf("60 requests took %v of clock time", span)
	}
}

func TestLimiterDeskFeedback(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, 60, 10, time.Minute)
	mustAcquireNow(t, l, false)
	// Other integrations spent the account: the desk says 12 left.
	l.observe(Rate{Total: 100, Remaining: 12, UsedCurrentRequest: 1})
	mustAcquireNow(t, l, false)
	mustAcquireNow(t, l, false)
	bg := acquireAsync(t.Context(), l, false)
	queued(t, clock, l, 1)
	for range 10 { // the rest is the reserve
		mustAcquireNow(t, l, true)
	}
	in := acquireAsync(t.Context(), l, true)
	queued(t, clock, l, 2)
	clock.Advance(time.Minute) // the desk's window has rolled
	if err := <-in; err != nil {
		t.Fatal(err)
	}
	if err := <-bg; err != nil {
		t.Fatal(err)
	}
	// A response without rate headers changes nothing.
	l.observe(Rate{Total: -1, Remaining: -1, UsedCurrentRequest: -1})
	mustAcquireNow(t, l, false)
}

func TestLimiterPauseAfter429(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, 60, 10, time.Minute)
	l.observe(Rate{Remaining: 0})
	l.pause(5 * time.Second)
	in := acquireAsync(t.Context(), l, true)
	queued(t, clock, l, 1)
	goesAfter(t, clock, in, 5*time.Second, "Retry-After") // Retry-After, not Remaining: 0, ends the wait
}

// Through the client: background saturating its share does not delay an
// interactive request.
func TestClientInteractiveGoesWhileBackgroundWaits(t *testing.T) {
	clock := clockwork.NewFakeClock()
	c, mux, _ := setup(t, WithClock(clock), WithRatePerMinute(5), WithReserve(1))
	var calls atomic.Int32
	mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, 200, `{"ticket":{"id":1}}`)
	})
	for range 4 {
		if _, _, err := c.Tickets.Get(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	bg := make(chan error, 1)
	go func() { _, _, err := c.Tickets.Get(ctx, 1); bg <- err }()
	queued(t, clock, c.limiter, 1)
	ic := c.Interactive()
	ictx, icancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer icancel()
	if _, _, err := ic.Tickets.Get(ictx, 1); err != nil {
		t.Fatalf("interactive request: %v", err)
	}
	if calls.Load() != 5 {
		t.Errorf("calls = %d", calls.Load())
	}
	cancel()
	if err := <-bg; !errors.Is(err, context.Canceled) {
		t.Errorf("background: %v", err)
	}
	if calls.Load() != 5 {
		t.Errorf("background request was sent over budget")
	}
}

// BenchmarkLimiterAcquire measures the cost of the limiter on a request
// that does not have to wait.
func BenchmarkLimiterAcquire(b *testing.B) {
	l := newLimiter(clockwork.NewRealClock(), 1<<30, 1, time.Minute)
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.acquire(ctx, false, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// A request with include= costs the desk more credits, and the limiter
// spends them: the budget holds in credits.
func TestLimiterSpendsCredits(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, 10, 2, time.Minute)
	for range 2 { // 6 credits
		if _, err := l.acquire(t.Context(), false, 3); err != nil {
			t.Fatal(err)
		}
	}
	// Background may spend 8: a third request of 3 waits, one of 2 goes.
	ch := make(chan error, 1)
	go func() { _, err := l.acquire(t.Context(), false, 3); ch <- err }()
	queued(t, clock, l, 1)
	select {
	case err := <-ch:
		t.Fatalf("a 3-credit background request went with 6 of 8 spent: %v", err)
	default:
	}
	// Interactive may spend the whole 10; it goes first.
	if _, err := l.acquire(t.Context(), true, 4); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	// A cost above the caller's share is capped: it waits for an empty
	// window rather than for ever.
	go func() { _, err := l.acquire(t.Context(), false, 50); ch <- err }()
	queued(t, clock, l, 1)
	clock.Advance(time.Minute)
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

func TestRequestCost(t *testing.T) {
	for _, tc := range []struct {
		method, path, query string
		want                int
	}{
		{"GET", "tickets/42", "", 1},
		{"GET", "tickets/42", "include=conversations", 2},
		{"GET", "tickets/42", "include=conversations%2Crequester", 3},
		{"GET", "tickets", "include=stats", 3},
		{"GET", "tickets", "include=stats,requester&per_page=100", 5},
		{"GET", "tickets/filter", "query=%22priority%3A4%22", 1},
		{"PUT", "tickets/42", "include=conversations", 1},
		{"GET", "agents", "include=x", 1},
		{"GET", "tickets/42/conversations", "", 1},
	} {
		if got := requestCost(tc.method, tc.path, tc.query); got != tc.want {
			t.Errorf("requestCost(%s %s?%s) = %d, want %d", tc.method, tc.path, tc.query, got, tc.want)
		}
	}
}
