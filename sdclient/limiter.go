package sdclient

import (
	"context"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// limiter enforces "at most rate credits in any window-long sliding window"
// (not a token bucket, whose burst can exceed that), with a reserve: a
// background request may only start while it leaves at least reserve
// credits of the window unspent, an interactive one while it fits the rate.
// Waiting interactive requests are served before waiting background ones.
// A request costs the credits the desk charges for it: 1, more with
// include= (see requestCost).
//
// It also listens to the desk: other integrations share the account budget,
// so when X-Ratelimit-Remaining says fewer requests are left than we think,
// we hold back (keeping the reserve for interactive requests) until the
// desk's window has rolled; after a 429 everybody waits for Retry-After.
type limiter struct {
	clock   clockwork.Clock
	rate    int
	reserve int
	window  time.Duration

	mu          sync.Mutex
	sent        []time.Time // one start time per credit spent in the current window, ascending
	interactive []*waiter   // FIFO
	background  []*waiter   // FIFO

	// Desk feedback.
	deskLeft    int       // credits the desk said were left, minus those we spent since
	deskUntil   time.Time // feedback applies until then (zero: none)
	pausedUntil time.Time // after a 429: nobody starts before then
}

type waiter struct {
	interactive bool
	cost        int
	ready       chan struct{}
	granted     bool
	at          time.Time
}

func newLimiter(clock clockwork.Clock, rate, reserve int, window time.Duration) *limiter {
	return &limiter{clock: clock, rate: rate, reserve: reserve, window: window}
}

// acquire blocks until a request costing cost credits may start, counts
// it, and returns the (clock) time it was granted. A cost above what the
// caller may ever spend in one window is capped at that, so that it waits
// for an empty window instead of for ever.
func (l *limiter) acquire(ctx context.Context, interactive bool, cost int) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	most := l.rate
	if !interactive {
		most -= l.reserve
	}
	cost = max(1, min(cost, most))
	w := &waiter{interactive: interactive, cost: cost, ready: make(chan struct{})}
	l.mu.Lock()
	if interactive {
		l.interactive = append(l.interactive, w)
	} else {
		l.background = append(l.background, w)
	}
	for {
		next := l.dispatchLocked(l.clock.Now())
		if w.granted {
			at := w.at
			l.mu.Unlock()
			return at, nil
		}
		l.mu.Unlock()
		t := l.clock.NewTimer(next)
		select {
		case <-w.ready:
			t.Stop()
			l.mu.Lock()
			at := w.at
			l.mu.Unlock()
			return at, nil
		case <-t.Chan():
			l.mu.Lock()
		case <-ctx.Done():
			t.Stop()
			l.mu.Lock()
			if w.granted { // granted in the meantime: the slot is taken, use it
				at := w.at
				l.mu.Unlock()
				return at, nil
			}
			l.removeLocked(w)
			l.dispatchLocked(l.clock.Now())
			l.mu.Unlock()
			return time.Time{}, ctx.Err()
		}
	}
}

func (l *limiter) removeLocked(w *waiter) {
	q := &l.background
	if w.interactive {
		q = &l.interactive
	}
	for i, x := range *q {
		if x == w {
			*q = append((*q)[:i], (*q)[i+1:]...)
			return
		}
	}
}

// dispatchLocked grants as many queued requests as the budget allows,
// interactive ones first, and returns how long until the budget may change.
func (l *limiter) dispatchLocked(now time.Time) time.Duration {
	cutoff := now.Add(-l.window)
	drop := 0
	for drop < len(l.sent) && !l.sent[drop].After(cutoff) {
		drop++
	}
	if drop > 0 {
		l.sent = append(l.sent[:0], l.sent[drop:]...)
	}
	if !l.deskUntil.IsZero() && !now.Before(l.deskUntil) {
		l.deskUntil = time.Time{}
	}
	for {
		var w *waiter
		switch {
		case len(l.interactive) > 0 && l.allowedLocked(now, true, l.interactive[0].cost):
			w = l.interactive[0]
			l.interactive = l.interactive[1:]
		case len(l.interactive) == 0 && len(l.background) > 0 && l.allowedLocked(now, false, l.background[0].cost):
			w = l.background[0]
			l.background = l.background[1:]
		}
		if w == nil {
			break
		}
		for range w.cost {
			l.sent = append(l.sent, now)
		}
		if !l.deskUntil.IsZero() {
			l.deskLeft -= w.cost
		}
		w.granted, w.at = true, now
		close(w.ready)
	}
	// Next change: the oldest request leaving the window, the end of a
	// pause or of desk feedback.
	next := l.window
	if len(l.sent) > 0 {
		next = l.sent[0].Add(l.window).Sub(now)
	}
	if now.Before(l.pausedUntil) {
		next = min(next, l.pausedUntil.Sub(now))
	}
	if !l.deskUntil.IsZero() {
		next = min(next, l.deskUntil.Sub(now))
	}
	return max(next, time.Millisecond)
}

func (l *limiter) allowedLocked(now time.Time, interactive bool, cost int) bool {
	if now.Before(l.pausedUntil) {
		return false
	}
	keep := l.reserve
	if interactive {
		keep = 0
	}
	if len(l.sent)+cost > l.rate-keep {
		return false
	}
	if !l.deskUntil.IsZero() && l.deskLeft-cost < keep {
		return false
	}
	return true
}

// observe takes the desk's rate headers of a response into account.
func (l *limiter) observe(r Rate) {
	if r.Remaining < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	l.deskLeft = r.Remaining
	l.deskUntil = now.Add(l.window)
	l.dispatchLocked(now)
}

// pause stops every request from starting for d (after a 429) and returns
// the (clock) time the pause ends, for resume.
func (l *limiter) pause(d time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	until := now.Add(d)
	if until.After(l.pausedUntil) {
		l.pausedUntil = until
	}
	// The 429's Retry-After, not its Remaining: 0, says when the desk's
	// window rolls.
	if l.deskUntil.After(l.pausedUntil) {
		l.deskUntil = l.pausedUntil
	}
	return until
}

// resume ends a pause that ended by until, once the request that got the
// 429 has waited its Retry-After through the client's sleep (which tests
// replace): the wait is not served twice, once by the sleep and again on
// the clock. A later, longer pause (another 429) stays.
func (l *limiter) resume(until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pausedUntil.After(until) {
		return
	}
	l.pausedUntil = time.Time{}
	// The desk's window rolled with the Retry-After (see pause).
	if !l.deskUntil.IsZero() && !l.deskUntil.After(until) {
		l.deskUntil = time.Time{}
	}
	l.dispatchLocked(l.clock.Now())
}

// waiting reports how many requests are queued (tests).
func (l *limiter) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.interactive) + len(l.background)
}
