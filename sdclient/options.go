package sdclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
)

// Option configures a Client in New. An option given a bad value makes New
// fail with an error naming it.
type Option func(*config) error

type config struct {
	httpClient  *http.Client
	rate        int
	reserve     int // -1: default
	listRate    int // 0: no separate budget for ticket lists
	logger      *slog.Logger
	maxAttempts int
	userAgent   string
	clock       clockwork.Clock
	sleep       func(ctx context.Context, d time.Duration) error
	backoffBase time.Duration
	backoffMax  time.Duration
	maxResponse int64
}

// WithHTTPClient sets the HTTP client used for every request (timeouts,
// proxies, transports). The default has a 60-second timeout. The client
// uses a copy of hc with its redirect policy (redirect.go: GET and HEAD
// only, within the base URL's origin); hc itself is not changed, and its
// own CheckRedirect, if any, is still asked about redirects the policy
// allows.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("WithHTTPClient: client is nil")
		}
		c.httpClient = hc
		return nil
	}
}

// WithRatePerMinute sets this client's budget: at most n credits spent at
// the desk in any 60-second window, failed requests and 429s included. A
// request costs 1 credit, a ticket view or list with include= more, as the
// desk charges (see requestCost). Default 60.
func WithRatePerMinute(n int) Option {
	return func(c *config) error {
		if n < 2 {
			return fmt.Errorf("WithRatePerMinute: rate must be at least 2 requests per minute, got %d", n)
		}
		c.rate = n
		return nil
	}
}

// WithListRatePerMinute sets a separate budget for ticket listing (GET
// /tickets and GET /tickets/filter): at most n of them in any 60-second
// window, within the overall rate, a fifth kept for interactive callers
// like the overall one. The desk limits listing separately (40 a minute on
// the smallest plan, inside its 100); 0 (default) adds no separate limit.
func WithListRatePerMinute(n int) Option {
	return func(c *config) error {
		if n != 0 && n < 2 {
			return fmt.Errorf("WithListRatePerMinute: rate must be 0 (no separate limit) or at least 2 requests per minute, got %d", n)
		}
		c.listRate = n
		return nil
	}
}

// WithReserve sets how many requests of each 60-second window are kept for
// interactive callers (Client.Interactive); background requests may use the
// rate minus the reserve. Default: 20% of the rate, at least 1. It must be
// at least 0 and less than the rate.
func WithReserve(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("WithReserve: reserve must be 0 or more, got %d", n)
		}
		c.reserve = n
		return nil
	}
}

// WithLogger sets the logger for the per-request debug lines. The default
// discards them.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: logger is nil")
		}
		c.logger = l
		return nil
	}
}

// WithMaxAttempts sets how many times one call may be sent in total
// (retries after 429, and after 5xx or network errors for GET, PUT and
// DELETE). 1 disables retries. Default 4.
func WithMaxAttempts(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 20 {
			return fmt.Errorf("WithMaxAttempts: attempts must be between 1 and 20, got %d", n)
		}
		c.maxAttempts = n
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		if strings.TrimSpace(ua) == "" || strings.ContainsAny(ua, "\r\n") {
			return fmt.Errorf("WithUserAgent: user agent must be a non-empty single line, got %q", ua)
		}
		c.userAgent = ua
		return nil
	}
}

// WithClock sets the clock used by the rate limiter and for waits (tests
// pass a clockwork fake clock). Default: the real clock.
func WithClock(clk clockwork.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return errors.New("WithClock: clock is nil")
		}
		c.clock = clk
		return nil
	}
}

// WithSleep replaces how the client waits before a retry (Retry-After after
// a 429, backoff after a 5xx). The function must return early with an error
// when ctx is done. Once it has waited out a 429's Retry-After, the pause
// that 429 put on every request of the client ends too, so a test's sleep
// drives the whole wait. Tests use it to record waits without sleeping.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) error {
		if sleep == nil {
			return errors.New("WithSleep: function is nil")
		}
		c.sleep = sleep
		return nil
	}
}

// WithBackoff sets the exponential backoff between retries after 5xx and
// network errors: the first wait is about base, doubling up to max, with
// jitter. Default 500ms up to 30s.
func WithBackoff(base, maxWait time.Duration) Option {
	return func(c *config) error {
		if base <= 0 || maxWait < base {
			return fmt.Errorf("WithBackoff: need 0 < base <= max, got base %v max %v", base, maxWait)
		}
		c.backoffBase, c.backoffMax = base, maxWait
		return nil
	}
}

// WithMaxResponseBytes caps the size of a successful (2xx) response body the
// client reads and decodes; a larger one fails with ErrResponseTooLarge
// without being read to its end. Default 32 MiB (a page of 100 tickets with
// their descriptions is well under 1 MiB).
func WithMaxResponseBytes(n int64) Option {
	return func(c *config) error {
		if n < 1 || n == math.MaxInt64 {
			return fmt.Errorf("WithMaxResponseBytes: limit must be between 1 byte and %d bytes, got %d", int64(math.MaxInt64-1), n)
		}
		c.maxResponse = n
		return nil
	}
}
