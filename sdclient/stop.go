package sdclient

import (
	"context"
	"errors"
	"fmt"
)

// ErrStopped is wrapped by the error of a request that was never sent
// because the stop context given to WithStop ended while it waited to
// start (for rate budget, or for a Retry-After or backoff before its first
// attempt).
var ErrStopped = errors.New("stopping: request not sent")

type stopKey struct{}

// WithStop returns ctx carrying stop: once stop is done, a request made
// with the returned context that has not been sent yet gives up with
// ErrStopped instead of waiting for rate budget, while a request already
// sent runs to its end under ctx. A scheduler that is stopping uses it to
// finish the requests under way without starting more.
func WithStop(ctx, stop context.Context) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// waitContext is ctx, also cancelled when ctx's stop (see WithStop) ends:
// the context a request waits under before it is sent.
func waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	stop, ok := ctx.Value(stopKey{}).(context.Context)
	if !ok || stop == nil {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(stop, cancel)
	return wctx, func() { unhook(); cancel() }
}

// stopped reports whether ctx's stop (see WithStop) has ended while ctx
// itself has not.
func stopped(ctx context.Context) bool {
	stop, ok := ctx.Value(stopKey{}).(context.Context)
	return ok && stop != nil && stop.Err() != nil && ctx.Err() == nil
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
