package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// A desk that does not answer at start-up is not a reason to stop: under
// a supervisor that would be a restart loop in which chat cannot even say
// that the desk is down. deskbot starts; /readyz says the desk is
// unreachable, since when and when it is tried next; commands answer that
// the desk is unreachable; and what cannot run without the desk (the rules
// scheduler) waits until the desk answers.

// Backoff of the start-up check while the desk does not answer.
const (
	reachFirstWait = time.Second
	reachMaxWait   = 30 * time.Second
)

// deskReach is whether the desk has answered deskbot's start-up check (GET
// /agents/me). Once it has, it stays reached: a desk that goes down later
// is the desk check of /readyz's and each request's business.
type deskReach struct {
	check  func(ctx context.Context) (*sdclient.Agent, error) // checkDesk
	logger *slog.Logger
	now    func() time.Time

	first, max time.Duration // the backoff's first and longest wait
	upc        chan struct{} // closed once the desk answered

	mu        sync.Mutex
	downSince time.Time // zero once reached
	lastErr   error     // why the last check failed
	nextTry   time.Time
}

// reachedDesk is the deskReach of a desk that answered at start-up.
func reachedDesk() *deskReach {
	r := &deskReach{upc: make(chan struct{})}
	close(r.upc)
	return r
}

// unreachedDesk is the deskReach of a desk whose start-up check failed at
// now with err (not a refusal of the key): Run retries check.
func unreachedDesk(check func(context.Context) (*sdclient.Agent, error), err error, now func() time.Time, logger *slog.Logger) *deskReach {
	t := now()
	return &deskReach{
		check: check, logger: logger, now: now,
		first: reachFirstWait, max: reachMaxWait, upc: make(chan struct{}),
		downSince: t, lastErr: err, nextTry: t.Add(reachFirstWait),
	}
}

// up is closed once the desk has answered.
func (r *deskReach) up() <-chan struct{} { return r.upc }

// answered reports whether the desk has answered.
func (r *deskReach) answered() bool {
	select {
	case <-r.upc:
		return true
	default:
		return false
	}
}

// failed is the error of the last check while the desk has not answered,
// nil once it has.
func (r *deskReach) failed() error {
	if r.answered() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// status is nil once the desk has answered; before, the finding of
// /readyz: unreachable, since when and why, and when it is tried next.
func (r *deskReach) status() error {
	if r.answered() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Errorf("unreachable since %s (%v); next try at %s; the rules start when it answers",
		r.downSince.UTC().Format(time.RFC3339), r.lastErr, r.nextTry.UTC().Format(time.RFC3339))
}

// Run retries the start-up check with capped exponential backoff (with
// jitter) until the desk answers, then returns nil; it logs when the desk
// answers, not each attempt. A desk that answers by refusing the API key
// (401, 403) or the URL (404) stops the process with that one line, as at
// start-up. It is a component.
func (r *deskReach) Run(ctx context.Context) error {
	if r.answered() {
		return nil
	}
	wait := r.first
	for {
		r.mu.Lock()
		next := r.nextTry
		r.mu.Unlock()
		t := time.NewTimer(next.Sub(r.now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		me, err := r.check(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused deskRefused
		switch {
		case errors.As(err, &refused):
			return err
		case err == nil:
			r.mu.Lock()
			since := r.downSince
			r.downSince, r.lastErr = time.Time{}, nil
			r.mu.Unlock()
			close(r.upc)
			r.logger.Info("the desk answers now: starting what waited for it",
				"agent", me.Email, "unreachable_for", r.now().Sub(since).Round(time.Second).String())
			return nil
		}
		wait = min(2*wait, r.max)
		next = r.now().Add(wait/2 + rand.N(wait/2+1))
		r.mu.Lock()
		r.lastErr, r.nextTry = err, next
		r.mu.Unlock()
		r.logger.Debug("the desk still does not answer", "err", err, "next_try", next)
	}
}

// deskRefused is a start-up check that the desk answered with a refusal
// of deskbot's configuration (the key, the URL): retrying cannot help.
type deskRefused struct{ error }
