package slackchat

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// Outgoing Slack calls (issue 16, 9b): every Web API call and response_url
// post goes through slackTransport, which bounds them and retries what is
// safe to retry.
//
//   - Concurrency: at most maxSlackCalls at once (a burst of 1,000 answers
//     no longer opens 1,000 sockets and runs out of open files); the idle
//     connections kept are as many, so they are reused.
//   - Time: the http.Client's timeout (15 s by default) bounds each call,
//     retries and waits included; a wait that does not fit is not started.
//   - 429: retried after its Retry-After (at least 1 s, at most
//     maxRetryAfter; beyond that the 429 is returned, slack-go reports a
//     *slack.RateLimitedError), for every call: Slack did not act on it.
//   - A connection that could not be made (dial errors, "too many open
//     files"): retried with backoff for every call: nothing was sent.
//   - 5xx and a connection broken after the request went out: retried
//     only for calls that may safely happen twice (reads, chat.update,
//     views.update, ...). chat.postMessage, chat.postEphemeral, views.open
//     and response_url posts are not: a second attempt could post twice.
//
// slack-go's own OptionRetryConfig does not fit: response_url posts
// (slack.PostWebhookCustomHTTPContext) take an *http.Client and bypass it,
// and its connection handler retries any POST on "EOF".
type slackTransport struct {
	base    http.RoundTripper
	slots   chan struct{}
	log     *slog.Logger
	retries int
	backoff time.Duration // first backoff; doubles, with jitter
	maxWait time.Duration // longest Retry-After honoured
}

const (
	maxSlackCalls     = 32
	maxSlackRetries   = 3
	maxRetryAfter     = 10 * time.Second
	firstSlackBackoff = 100 * time.Millisecond
)

// idempotentSlackMethods may be sent twice with the same effect as once.
var idempotentSlackMethods = map[string]bool{
	"apps.connections.open": true, "auth.test": true,
	"users.info": true, "users.lookupByEmail": true,
	"usergroups.list": true, "usergroups.users.list": true,
	"conversations.list": true, "conversations.history": true, "conversations.info": true,
	"conversations.open": true, "conversations.replies": true,
	"chat.update": true, "chat.delete": true, "views.update": true, "views.publish": true,
}

func newSlackTransport(base http.RoundTripper, log *slog.Logger) *slackTransport {
	if base == nil {
		base = http.DefaultTransport
	}
	return &slackTransport{
		base: base, slots: make(chan struct{}, maxSlackCalls), log: log,
		retries: maxSlackRetries, backoff: firstSlackBackoff, maxWait: maxRetryAfter,
	}
}

// slackHTTPClient returns a copy of h whose calls go through a
// slackTransport; nil h: a client with a 15 s timeout. A client without a
// transport of its own gets one that keeps as many idle connections per
// host as calls may run at once (http.DefaultTransport keeps 2: a burst
// would open and close a connection per call).
func slackHTTPClient(h *http.Client, log *slog.Logger) *http.Client {
	if h == nil {
		h = &http.Client{Timeout: 15 * time.Second}
	}
	c := *h
	base := h.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = maxSlackCalls
		base = t
	}
	c.Transport = newSlackTransport(base, log)
	return &c
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// base transport.
func (t *slackTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *slackTransport) acquire(ctx context.Context) error {
	select {
	case t.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *slackTransport) release() { <-t.slots }

// RoundTrip implements http.RoundTripper.
func (t *slackTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	safe := idempotentSlackMethods[path.Base(req.URL.Path)]
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 0; ; attempt++ {
		r, err := attemptOf(req, attempt)
		if err != nil {
			return nil, err
		}
		if err := t.acquire(ctx); err != nil {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, err
		}
		resp, err := t.base.RoundTrip(r)
		t.release()
		last := attempt >= t.retries || !replayable
		wait, retry := t.retryWait(ctx, attempt, last, safe, resp, err)
		if !retry {
			return resp, err
		}
		what := "connection failed"
		if resp != nil {
			what = resp.Status
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		t.log.Debug("slack call retried", "method", slackMethod(req), "why", what, "err", err, "attempt", attempt+1, "in", wait)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// attemptOf is the request of attempt n: req itself first, then a clone
// with a fresh body.
func attemptOf(req *http.Request, n int) (*http.Request, error) {
	if n == 0 || req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

// retryWait says whether an attempt's outcome (resp or err) is retried,
// and after how long: a failure to connect when the request was never
// sent or is safe to repeat, a 429 whose Retry-After is short enough, a
// 5xx of a safe method; never the last attempt, nor a wait the call's
// deadline cannot hold.
func (t *slackTransport) retryWait(ctx context.Context, attempt int, last, safe bool, resp *http.Response, err error) (time.Duration, bool) {
	var wait time.Duration
	switch {
	case err != nil:
		if last || !(neverSent(err) || safe) || ctx.Err() != nil {
			return 0, false
		}
		wait = t.backoffFor(attempt)
	case resp.StatusCode == http.StatusTooManyRequests:
		if last {
			return 0, false
		}
		wait = retryAfter(resp.Header.Get("Retry-After"))
		if wait > t.maxWait {
			return 0, false
		}
	case resp.StatusCode >= 500:
		if last || !safe {
			return 0, false
		}
		wait = t.backoffFor(attempt)
	default:
		return 0, false
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return 0, false // the wait does not fit in the call's time: answer now
	}
	return wait, true
}

func (t *slackTransport) backoffFor(attempt int) time.Duration {
	d := t.backoff << attempt
	return d + rand.N(d/2+1)
}

// retryAfter reads a Retry-After of whole seconds; Slack always sends one
// with a 429. Missing or odd: one second.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return time.Second
	}
	if n > 86400 {
		n = 86400
	}
	return time.Duration(n) * time.Second
}

// neverSent reports an error from before the request went out: the
// connection could not be made (no socket, refused, DNS), so Slack saw
// nothing.
func neverSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// slackMethod names a call for logs: the Web API method, or response_url
// (whose path is a secret of sorts: it lets anyone answer the command).
func slackMethod(req *http.Request) string {
	m := path.Base(req.URL.Path)
	if strings.Contains(m, ".") {
		return m
	}
	return "response_url"
}
