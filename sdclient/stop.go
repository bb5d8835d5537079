package sdclient

import (
	"context"
	"errors"
	"fmt"
)

// ErrStopped is wrapped by the error of a request that was never sent
// because the client's stop (see Client.StopWith) ended while it waited to
// start (for rate budget, or for a Retry-After or backoff before its first
// attempt).
var ErrStopped = errors.New("stopping: request not sent")

// StopWith returns a client sharing c's rate limiter, HTTP client and
// settings (interactive or not, like c) whose requests also heed stop: once
// stop is done, a request that has not been sent yet gives up with
// ErrStopped instead of waiting for rate budget, while a request already
// sent runs to its end under its own context. A scheduler that is stopping
// uses it to finish the requests under way without starting more. A nil
// stop returns a client without one.
func (c *Client) StopWith(stop context.Context) *Client {
	t := *c
	t.stop = stop
	t.initServices()
	return &t
}

// stops are the stop contexts a request heeds: the client's (StopWith).
func (c *Client) stops(context.Context) []context.Context {
	if c.stop != nil {
		return []context.Context{c.stop}
	}
	return nil
}

// waitContext is ctx, also cancelled when one of its stops ends: the
// context a request waits under before it is sent.
func (c *Client) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	stops := c.stops(ctx)
	if len(stops) == 0 {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	unhooks := make([]func() bool, 0, len(stops))
	for _, stop := range stops {
		unhooks = append(unhooks, context.AfterFunc(stop, cancel))
	}
	return wctx, func() {
		for _, unhook := range unhooks {
			unhook()
		}
		cancel()
	}
}

// stopped reports whether one of the stops of a request made with ctx has
// ended while ctx itself has not.
func (c *Client) stopped(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	for _, stop := range c.stops(ctx) {
		if stop.Err() != nil {
			return true
		}
	}
	return false
}

// budgetWait is the error of a request that gave up waiting for budget
// (ErrBudgetWait or ErrListBudgetWait, with err, the context's error). An
// earlier attempt of it that may have been applied (applied) rules out the
// sentinel, which promises that nothing reached the desk.
func budgetWait(op string, budget, err error, applied bool) error {
	if applied {
		return fmt.Errorf("sdclient: %s: %s: %w", op, budget, err)
	}
	return fmt.Errorf("sdclient: %s: %w: %w", op, budget, err)
}
