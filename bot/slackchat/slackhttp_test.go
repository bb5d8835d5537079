package slackchat_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// calls counts the fake's Web API calls of a method, and how many of them
// it answered with status.
func calls(fake *slackfake.Server, method string, status int) (all, with int) {
	for _, c := range fake.Calls() {
		if c.Method == method {
			all++
			if c.Status == status {
				with++
			}
		}
	}
	return all, with
}

// A 429 on response_url is retried after its Retry-After: the answer
// arrives once, a second later.
func TestSlackAnswerRetriedAfter429(t *testing.T) {
	h := newE2E(t, nil, nil)
	h.fake.RateLimitNext(slackfake.ResponseURLMethod, 1, time.Second)
	start := time.Now()
	env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "help", UserID: "UALICE", ChannelID: "C0DESK"})
	r := h.response(env)
	if d := time.Since(start); d < time.Second {
		t.Errorf("answered after %s, before the Retry-After", d)
	}
	if !strings.Contains(r.Text, "/ticket show") {
		t.Fatalf("answer %q", r.Text)
	}
	time.Sleep(50 * time.Millisecond) // no second answer comes: real time is let pass before counting
	if n := len(h.fake.Responses()); n != 1 {
		t.Fatalf("%d answers, want 1", n)
	}
	if m := h.fake.Messages(); len(m) != 0 {
		t.Fatalf("fell back to %+v", m)
	}
}

// A Retry-After beyond the cap is not waited for: the answer goes at once
// the other way (chat.postEphemeral).
func TestSlackLongRetryAfterFallsBack(t *testing.T) {
	h := newE2E(t, nil, nil)
	h.fake.RateLimitNext(slackfake.ResponseURLMethod, 1, time.Minute)
	start := time.Now()
	h.send(slackfake.SlashCommand{Command: "/ticket", Text: "help", UserID: "UALICE", ChannelID: "C0DESK"})
	m, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool { return m.Method == "chat.postEphemeral" })
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second || !strings.Contains(m.Text, "/ticket show") {
		t.Fatalf("fallback after %s: %q", d, m.Text)
	}
	if n := len(h.fake.Responses()); n != 0 {
		t.Fatalf("%d response_url answers despite the 429", n)
	}
}

// Web API 429s are retried after Retry-After for every method; 5xx only
// for methods that may run twice: chat.postMessage is not repeated.
func TestSlackWebAPIRetries(t *testing.T) {
	h := newE2E(t, nil, nil)
	// chat.postEphemeral: the refusal of a non-agent's click.
	m := h.alert("k1", 42)
	h.fake.RateLimitNext("chat.postEphemeral", 1, time.Second)
	env, err := h.fake.BlockAction(h.ctx, "UCAROL", m.Channel, m.TS, chat.ActionResolve, chat.ButtonValue(42, "page-urgent", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool { return m.Method == "chat.postEphemeral" && m.User == "UCAROL" }); err != nil {
		t.Fatal(err)
	}
	if all, limited := calls(h.fake, "chat.postEphemeral", http.StatusTooManyRequests); all != 2 || limited != 1 {
		t.Errorf("chat.postEphemeral: %d calls, %d rate limited; want 2, 1", all, limited)
	}

	// users.info is a read: a 503 is retried.
	h.fake.ServerErrorNext("users.info", 2, http.StatusServiceUnavailable)
	if r := h.slash("UBOB", "/ticket", "show 42"); !strings.Contains(all(r), "Printer on fire") {
		t.Fatalf("after users.info 503s: %q", r.Text)
	}
	if all, failed := calls(h.fake, "users.info", http.StatusServiceUnavailable); failed != 2 || all < 3 {
		t.Errorf("users.info: %d calls, %d failed", all, failed)
	}

	// chat.postMessage is not: a 500 fails the alert, and it is sent once.
	before, _ := calls(h.fake, "chat.postMessage", 0)
	h.fake.ServerErrorNext("chat.postMessage", 1, http.StatusInternalServerError)
	tk, _ := h.desk.Ticket(h.ctx, 42)
	err = h.slack.Alert(h.ctx, chat.AlertMessage{Channel: "#it-oncall", Text: "Urgent", Ticket: tk, Rule: "r", Key: "k2"})
	if err == nil {
		t.Fatal("alert succeeded on a 500")
	}
	if after, _ := calls(h.fake, "chat.postMessage", 0); after-before != 1 {
		t.Errorf("chat.postMessage sent %d times on a 500, want 1", after-before)
	}
}

// stubTransport answers from a function and records concurrency.
type stubTransport struct {
	mu      sync.Mutex
	n, peak int
	calls   atomic.Int32
	answer  func(n int32, r *http.Request) (*http.Response, error)
}

func (s *stubTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.n++
	s.peak = max(s.peak, s.n)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.n--
		s.mu.Unlock()
	}()
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return s.answer(s.calls.Add(1), r)
}

func okResponse(status int) *http.Response {
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"ok":true}`))}
}

func post(t *testing.T, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("a=b"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

// At most maxSlackCalls run at once, however many are asked for.
func TestSlackTransportBoundsConcurrency(t *testing.T) {
	stub := &stubTransport{answer: func(int32, *http.Request) (*http.Response, error) {
		time.Sleep(5 * time.Millisecond) // a slow Slack: calls overlap
		return okResponse(http.StatusOK), nil
	}}
	c := slackchat.SlackHTTPClient(&http.Client{Timeout: 10 * time.Second, Transport: stub}, slog.New(slog.DiscardHandler))
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if _, err := post(t, c, "http://slack.test/api/chat.postEphemeral"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if stub.peak > slackchat.MaxSlackCalls || stub.calls.Load() != 200 {
		t.Fatalf("peak %d concurrent calls (bound %d), %d calls", stub.peak, slackchat.MaxSlackCalls, stub.calls.Load())
	}
}

// Which failures are retried: a connection never made always; a broken
// one or a 5xx only for methods that may run twice.
func TestSlackTransportRetries(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("socket: too many open files")}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	tests := []struct {
		name, url string
		first     func() (*http.Response, error)
		wantCalls int32
		wantErr   bool
		wantCode  int
	}{
		{"dial error, post", "http://slack.test/api/chat.postMessage", func() (*http.Response, error) { return nil, dial }, 2, false, 200},
		{"dial error, response_url", "http://hooks.test/commands/T1/2/x", func() (*http.Response, error) { return nil, dial }, 2, false, 200},
		{"reset, read", "http://slack.test/api/users.info", func() (*http.Response, error) { return nil, reset }, 2, false, 200},
		{"reset, post", "http://slack.test/api/chat.postMessage", func() (*http.Response, error) { return nil, reset }, 1, true, 0},
		{"503, update", "http://slack.test/api/chat.update", func() (*http.Response, error) { return okResponse(503), nil }, 2, false, 200},
		{"503, post", "http://slack.test/api/chat.postMessage", func() (*http.Response, error) { return okResponse(503), nil }, 1, false, 503},
		{"503, response_url", "http://hooks.test/commands/T1/2/x", func() (*http.Response, error) { return okResponse(503), nil }, 1, false, 503},
		{"429, views.open", "http://slack.test/api/views.open", func() (*http.Response, error) {
			r := okResponse(429)
			r.Header.Set("Retry-After", "1")
			return r, nil
		}, 2, false, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stub := &stubTransport{answer: func(n int32, _ *http.Request) (*http.Response, error) {
				if n == 1 {
					return tc.first()
				}
				return okResponse(http.StatusOK), nil
			}}
			c := slackchat.SlackHTTPClient(&http.Client{Timeout: 10 * time.Second, Transport: stub}, slog.New(slog.DiscardHandler))
			resp, err := post(t, c, tc.url)
			if (err != nil) != tc.wantErr || stub.calls.Load() != tc.wantCalls {
				t.Fatalf("err %v, %d calls; want error %v, %d calls", err, stub.calls.Load(), tc.wantErr, tc.wantCalls)
			}
			if err == nil && resp.StatusCode != tc.wantCode {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
		})
	}
	// A wait that does not fit the call's time is not started.
	stub := &stubTransport{answer: func(int32, *http.Request) (*http.Response, error) {
		r := okResponse(429)
		r.Header.Set("Retry-After", "5")
		return r, nil
	}}
	c := slackchat.SlackHTTPClient(&http.Client{Transport: stub}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://slack.test/api/chat.postMessage", strings.NewReader("a=b"))
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 429 || time.Since(start) > 500*time.Millisecond || stub.calls.Load() != 1 {
		t.Fatalf("resp %v, err %v after %s, %d calls", resp, err, time.Since(start), stub.calls.Load())
	}
	resp.Body.Close()
}
