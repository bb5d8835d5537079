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
	"github.com/prometheus/client_golang/prometheus"
)

// Option configures a Client in New. Options only record their values; New
// checks them, and one given a bad value makes New fail with an error
// naming it.
type Option func(*config)

type config struct {
	httpClient  *http.Client
	rate        int
	reserve     int // default: 20% of the rate, at least 1
	listRate    int // 0: no separate budget for ticket lists
	logger      *slog.Logger
	maxAttempts int
	userAgent   string
	clock       clockwork.Clock
	sleep       func(ctx context.Context, d time.Duration) error
	backoffBase time.Duration
	backoffMax  time.Duration
	maxResponse int64
	metrics     prometheus.Registerer // WithMetrics; nil: none

	// given records the options whose value may be nil, so that New can
	// tell a nil given from an option not given.
	given struct{ httpClient, logger, clock, sleep, reserve, metrics bool }
}

// WithHTTPClient sets the HTTP client used for every request (timeouts,
// proxies, transports). The default has a 60-second timeout. The client
// uses a copy of hc with its redirect policy (redirect.go: GET and HEAD
// only, within the base URL's origin); hc itself is not changed, and its
// own CheckRedirect, if any, is still asked about redirects the policy
// allows.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) { c.httpClient, c.given.httpClient = hc, true }
}

// WithRatePerMinute sets this client's budget: at most n credits spent at
// the desk in any 60-second window, failed requests and 429s included. A
// request costs 1 credit, a ticket view or list with include= more, as the
// desk charges (see requestCost). Default 60.
func WithRatePerMinute(n int) Option {
	return func(c *config) { c.rate = n }
}

// WithListRatePerMinute sets a separate budget for ticket listing (GET
// /tickets and GET /tickets/filter): at most n of them in any 60-second
// window, within the overall rate, a fifth kept for interactive callers
// like the overall one. The desk limits listing separately (40 a minute on
// the smallest plan, inside its 100); 0 (default) adds no separate limit.
func WithListRatePerMinute(n int) Option {
	return func(c *config) { c.listRate = n }
}

// WithReserve sets how many requests of each 60-second window are kept for
// interactive callers (Client.Interactive); background requests may use the
// rate minus the reserve. Default: 20% of the rate, at least 1. It must be
// at least 0 and less than the rate.
func WithReserve(n int) Option {
	return func(c *config) { c.reserve, c.given.reserve = n, true }
}

// WithLogger sets the logger for the per-request debug lines. The default
// discards them.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger, c.given.logger = l, true }
}

// WithMaxAttempts sets how many times one call may be sent in total
// (retries after 429, and after 5xx or network errors for GET, PUT and
// DELETE). 1 disables retries. Default 4.
func WithMaxAttempts(n int) Option {
	return func(c *config) { c.maxAttempts = n }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *config) { c.userAgent = ua }
}

// WithClock sets the clock used by the rate limiter and for waits (tests
// pass a clockwork fake clock). Default: the real clock.
func WithClock(clk clockwork.Clock) Option {
	return func(c *config) { c.clock, c.given.clock = clk, true }
}

// WithSleep replaces how the client waits before a retry (Retry-After after
// a 429, backoff after a 5xx). The function must return early with an error
// when ctx is done. Once it has waited out a 429's Retry-After, the pause
// that 429 put on every request of the client ends too, so a test's sleep
// drives the whole wait. Tests use it to record waits without sleeping.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) { c.sleep, c.given.sleep = sleep, true }
}

// WithBackoff sets the exponential backoff between retries after 5xx and
// network errors: the first wait is about base, doubling up to max, with
// jitter. Default 500ms up to 30s.
func WithBackoff(base, maxWait time.Duration) Option {
	return func(c *config) { c.backoffBase, c.backoffMax = base, maxWait }
}

// WithMaxResponseBytes caps the size of a successful (2xx) response body the
// client reads and decodes; a larger one fails with ErrResponseTooLarge
// without being read to its end. Default 32 MiB (a page of 100 tickets with
// their descriptions is well under 1 MiB).
func WithMaxResponseBytes(n int64) Option {
	return func(c *config) { c.maxResponse = n }
}

// validate checks the options' values, in the order of the options above,
// and fills in the defaults that depend on others. Its errors name the
// option.
func (c *config) validate() error {
	for _, check := range []func() error{c.checkRates, c.checkGiven, c.checkTuning} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkRates checks the budgets: WithRatePerMinute, WithListRatePerMinute
// and WithReserve.
func (c *config) checkRates() error {
	if c.rate < 2 {
		return fmt.Errorf("WithRatePerMinute: rate must be at least 2 requests per minute, got %d", c.rate)
	}
	if c.listRate != 0 && c.listRate < 2 {
		return fmt.Errorf("WithListRatePerMinute: rate must be 0 (no separate limit) or at least 2 requests per minute, got %d", c.listRate)
	}
	if c.given.reserve && c.reserve < 0 {
		return fmt.Errorf("WithReserve: reserve must be 0 or more, got %d", c.reserve)
	}
	return nil
}

// checkGiven refuses a nil given to an option that needs a value.
func (c *config) checkGiven() error {
	switch {
	case c.given.httpClient && c.httpClient == nil:
		return errors.New("WithHTTPClient: client is nil")
	case c.given.logger && c.logger == nil:
		return errors.New("WithLogger: logger is nil")
	case c.given.clock && c.clock == nil:
		return errors.New("WithClock: clock is nil")
	case c.given.sleep && c.sleep == nil:
		return errors.New("WithSleep: function is nil")
	case c.given.metrics && c.metrics == nil:
		return errors.New("WithMetrics: registerer is nil")
	}
	return nil
}

// checkTuning checks WithMaxAttempts, WithUserAgent, WithBackoff and
// WithMaxResponseBytes.
func (c *config) checkTuning() error {
	if c.maxAttempts < 1 || c.maxAttempts > 20 {
		return fmt.Errorf("WithMaxAttempts: attempts must be between 1 and 20, got %d", c.maxAttempts)
	}
	if strings.TrimSpace(c.userAgent) == "" || strings.ContainsAny(c.userAgent, "\r\n") {
		return fmt.Errorf("WithUserAgent: user agent must be a non-empty single line, got %q", c.userAgent)
	}
	if c.backoffBase <= 0 || c.backoffMax < c.backoffBase {
		return fmt.Errorf("WithBackoff: need 0 < base <= max, got base %v max %v", c.backoffBase, c.backoffMax)
	}
	if c.maxResponse < 1 || c.maxResponse == math.MaxInt64 {
		return fmt.Errorf("WithMaxResponseBytes: limit must be between 1 byte and %d bytes, got %d", int64(math.MaxInt64-1), c.maxResponse)
	}
	return nil
}
