package scheduler

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// budgetWindow is the window of the request budget (per minute).
const budgetWindow = time.Minute

// spentLog is when the scheduler's own desk requests of the last minute
// were counted: from it, and the background budget, a cycle tells whether
// a ticket's firings would wait for budget past the cycle's deadline.
type spentLog struct {
	mu sync.Mutex
	at []time.Time // ascending
}

// add notes n requests at now.
func (l *spentLog) add(now time.Time, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range n {
		l.at = append(l.at, now)
	}
	l.trim(now)
}

func (l *spentLog) trim(now time.Time) {
	drop := 0
	for drop < len(l.at) && !l.at[drop].After(now.Add(-budgetWindow)) {
		drop++
	}
	l.at = append(l.at[:0], l.at[drop:]...)
}

// freeAt is when need more requests fit in budget requests a minute.
func (l *spentLog) freeAt(now time.Time, need, budget int) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trim(now)
	over := len(l.at) + need - budget
	switch {
	case over <= 0:
		return now
	case over > len(l.at):
		return now.Add(budgetWindow) // more than a minute's budget: an empty window
	}
	return l.at[over-1].Add(budgetWindow)
}

// pace is the queue step's answer for a cycle: until when it starts
// firings, at the background budget's pace.
type pace struct {
	deadline time.Time // zero: never stop (RunCycle)
	budget   int       // the background budget a minute (0: none to plan with)
	spent    *spentLog
	clock    clockwork.Clock
}

// pace is the queue's pace for a cycle in mode at now: a scheduled or
// kicked cycle stops starting firings when its next tick is due.
func (s *Scheduler) pace(mode cycleMode, now time.Time) pace {
	q := pace{budget: s.cfg.budget, spent: &s.spent, clock: s.cfg.clock}
	if mode != once {
		q.deadline = s.deadline(now)
	}
	return q
}

// fits reports whether the admitted firings of a ticket, costing cost
// desk requests, can start before the cycle's deadline: always without one
// (RunCycle) or without a budget to plan with, else when it is not due yet
// and their requests (and one for the next cycle's sync) fit the
// background budget by then.
func (q pace) fits(cost int) bool {
	if q.deadline.IsZero() {
		return true
	}
	now := q.clock.Now()
	if !now.Before(q.deadline) {
		return false
	}
	if q.budget <= 0 {
		return true
	}
	return q.spent.freeAt(now, cost+1, q.budget).Before(q.deadline)
}

// deadline is when a scheduled cycle starting at now must have started
// its last firing: when its next run is due (the tick, stretched by the
// budget's planner), less the time a request takes at the background
// budget's pace (a twentieth of the tick without a budget), so that the
// next cycle's sync starts on time.
func (s *Scheduler) deadline(now time.Time) time.Time {
	next := time.Duration(float64(s.tickEvery()) * max(s.plan.stretch(), 1))
	margin := next / 20
	if s.cfg.budget > 0 {
		margin = min(budgetWindow/time.Duration(s.cfg.budget), next/4)
	}
	return now.Add(next - margin)
}
