package firing

import (
	"errors"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Waiting reports whether err only says that a request waited, and was
// not sent: for deskbot's own request budget, the desk's rate limit (a
// 429), or a stop. Such a firing is deferred, not failed, in the metrics
// and the logs, so that DeskbotActionsFailing counts real failures only.
func Waiting(err error) bool {
	return errors.Is(err, sdclient.ErrBudgetWait) || errors.Is(err, sdclient.ErrListBudgetWait) ||
		errors.Is(err, sdclient.ErrRateLimited) || errors.Is(err, sdclient.ErrStopped)
}

// ErrNotDelivered may be wrapped by a Notifier's error to say that the
// alert was certainly not posted (the chat refused it), so that the firing
// can be released and retried at once.
var ErrNotDelivered = errors.New("alert not delivered")

// Retry delays of a firing whose action was refused: the first retry
// comes after RetryBase (the next poll at the default interval), and each
// further one waits twice as long, up to RetryMax, so that a refusal that
// will not go away (a deactivated agent, a closed channel, a missing
// permission) costs a request an hour instead of one a minute.
const (
	RetryBase = time.Minute
	RetryMax  = time.Hour
)

// RetryDelay is how long a firing refused at its attempt-th attempt waits.
// A refusal for the rate limit is retried on the next cycle: the budget,
// not the action, was the problem.
func RetryDelay(err error, attempt int) time.Duration {
	if errors.Is(err, sdclient.ErrRateLimited) || errors.Is(err, sdclient.ErrStopped) {
		return 0
	}
	d := RetryBase
	for i := 1; i < attempt && d < RetryMax; i++ {
		d *= 2
	}
	return min(d, RetryMax)
}

// NotSent reports whether err guarantees that the action never reached its
// target: refused before sending, or answered with a 4xx (429 included).
// A 5xx, a network error or a timeout after sending may have been applied.
func NotSent(err error) bool {
	if errors.Is(err, sdclient.ErrNotRetried) {
		return false
	}
	if errors.Is(err, sdclient.ErrInvalidInput) || errors.Is(err, ErrNotDelivered) || errors.Is(err, sdclient.ErrStopped) {
		return true
	}
	var apiErr *sdclient.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500
}
