package sdclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

const (
	testKey    = "sEcReTkEy123"
	basePrefix = "/desk" // the client must put /api/v2 under the base URL's path
	apiRoot    = basePrefix + "/api/v2"
)

// sleepRecorder replaces real waits: it records them and returns at once.
type sleepRecorder struct {
	mu     sync.Mutex
	waits  []time.Duration
	result error
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	if s.result != nil {
		return s.result
	}
	return ctx.Err()
}

func (s *sleepRecorder) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// setup starts a test server whose mux serves under apiRoot and a client for
// it with a generous budget and recorded sleeps.
func setup(t *testing.T, opts ...Option) (*Client, *http.ServeMux, *sleepRecorder) {
	t.Helper()
	mux := http.NewServeMux()
	outer := http.NewServeMux()
	outer.Handle(apiRoot+"/", http.StripPrefix(apiRoot, mux))
	outer.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside %s: %s %s", apiRoot, r.Method, r.URL)
		http.Error(w, "wrong prefix", http.StatusTeapot)
	})
	srv := httptest.NewServer(outer)
	t.Cleanup(srv.Close)
	rec := &sleepRecorder{}
	all := append([]Option{WithRatePerMinute(100000), WithSleep(rec.sleep), WithHTTPClient(srv.Client())}, opts...)
	c, err := New(srv.URL+basePrefix, testKey, all...)
	if err != nil {
		t.Fatal(err)
	}
	return c, mux, rec
}

func testMethod(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if r.Method != want {
		t.Errorf("method = %s, want %s", r.Method, want)
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != testKey || pass != "X" {
		t.Errorf("basic auth = %q/%q/%v, want the API key and X", user, pass, ok)
	}
}

// testQuery compares the raw (encoded) query.
func testQuery(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if r.URL.RawQuery != want {
		t.Errorf("query = %q, want %q", r.URL.RawQuery, want)
	}
}

// testBody compares the JSON body with want, a JSON text (key order and
// spacing do not matter, absent keys do).
func testBody(t *testing.T, r *http.Request, want string) {
	t.Helper()
	data, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var got, exp any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("body %s: %v", data, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("body = %s, want %s", data, want)
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func TestNewValidation(t *testing.T) {
	cases := []struct {
		name    string
		base    string
		key     string
		opts    []Option
		wantErr string
	}{
		{"ok", "https://acme.example.com", "k", nil, ""},
		{"empty key", "https://acme.example.com", "", nil, "API key is empty"},
		{"colon in key", "https://acme.example.com", "a:b", nil, "must not contain"},
		{"no scheme", "acme.example.com", "k", nil, "must start with https://"},
		{"ftp", "ftp://acme.example.com", "k", nil, "must start with https://"},
		{"userinfo", "https://user:pw@acme.example.com", "k", nil, "must not contain user info"},
		{"query", "https://acme.example.com/?a=1", "k", nil, "query"},
		{"rate too low", "https://a.example.com", "k", []Option{WithRatePerMinute(1)}, "WithRatePerMinute"},
		{"reserve negative", "https://a.example.com", "k", []Option{WithReserve(-1)}, "WithReserve"},
		{"reserve >= rate", "https://a.example.com", "k", []Option{WithRatePerMinute(10), WithReserve(10)}, "reserve 10 must be less than the rate 10"},
		{"attempts 0", "https://a.example.com", "k", []Option{WithMaxAttempts(0)}, "WithMaxAttempts"},
		{"nil http client", "https://a.example.com", "k", []Option{WithHTTPClient(nil)}, "WithHTTPClient"},
		{"nil logger", "https://a.example.com", "k", []Option{WithLogger(nil)}, "WithLogger"},
		{"bad user agent", "https://a.example.com", "k", []Option{WithUserAgent("a\nb")}, "WithUserAgent"},
		{"nil clock", "https://a.example.com", "k", []Option{WithClock(nil)}, "WithClock"},
		{"nil sleep", "https://a.example.com", "k", []Option{WithSleep(nil)}, "WithSleep"},
		{"bad backoff", "https://a.example.com", "k", []Option{WithBackoff(time.Second, time.Millisecond)}, "WithBackoff"},
		{"nil option", "https://a.example.com", "k", []Option{nil}, "nil option"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.base, tc.key, tc.opts...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New error = %v, want it to contain %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("error leaks URL credentials: %v", err)
			}
		})
	}
}

func TestNewBaseURLAndDefaults(t *testing.T) {
	for _, base := range []string{"https://acme.example.com", "https://acme.example.com/", "https://acme.example.com/api/v2", "https://acme.example.com/api/v2/"} {
		c, err := New(base, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.BaseURL(); got != "https://acme.example.com/api/v2/" {
			t.Errorf("New(%q).BaseURL() = %q", base, got)
		}
	}
	c, _ := New("https://a.example.com", "k")
	if c.limiter.rate != 60 || c.limiter.reserve != 12 {
		t.Errorf("default rate/reserve = %d/%d, want 60/12", c.limiter.rate, c.limiter.reserve)
	}
	c, _ = New("https://a.example.com", "k", WithRatePerMinute(3))
	if c.limiter.reserve != 1 {
		t.Errorf("reserve for rate 3 = %d, want at least 1", c.limiter.reserve)
	}
}

func TestRequestHeaders(t *testing.T) {
	c, mux, _ := setup(t, WithUserAgent("deskbot-test/9"))
	mux.HandleFunc("GET /agents/me", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(testKey+":X"))
		if got := r.Header.Get("Authorization"); got != want {
			t.Errorf("Authorization = %q, want %q", got, want)
		}
		if got := r.Header.Get("User-Agent"); got != "deskbot-test/9" {
			t.Errorf("User-Agent = %q", got)
		}
		if got := r.Header.Get("Accept"); got != "application/json" {
			t.Errorf("Accept = %q", got)
		}
		if r.URL.User != nil {
			t.Errorf("URL has user info")
		}
		w.Header().Set("X-Ratelimit-Total", "100")
		w.Header().Set("X-Ratelimit-Remaining", "97")
		w.Header().Set("X-Ratelimit-Used-CurrentRequest", "1")
		writeJSON(w, 200, `{"agent":{"id":21004158707,"first_name":"Ada","email":"ada@example.com"}}`)
	})
	a, resp, err := c.Agents.Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != 21004158707 || a.Email != "ada@example.com" {
		t.Errorf("agent = %+v", a)
	}
	if resp.Rate != (Rate{Total: 100, Remaining: 97, UsedCurrentRequest: 1}) {
		t.Errorf("rate = %+v", resp.Rate)
	}
	if resp.Attempts != 1 || resp.StatusCode != 200 {
		t.Errorf("attempts %d status %d", resp.Attempts, resp.StatusCode)
	}
}

func TestParseLinkNext(t *testing.T) {
	cases := []struct {
		name  string
		links []string
		page  int
	}{
		{"docs form", []string{`<https://d.freshservice.com/api/v2/tickets?filter=all_tickets&page=2>;rel="next"`}, 2},
		{"with space", []string{`<https://d.freshservice.com/api/v2/tickets?page=3>; rel="next"`}, 3},
		{"bare rel", []string{`<https://d/api/v2/tickets?page=4>; rel=next`}, 4},
		{"upper case", []string{`<https://d/api/v2/tickets?page=5>; REL="Next"`}, 5},
		{"several relations", []string{`<https://d/x?page=1>; rel="prev", <https://d/x?per_page=100&page=6>; rel="next"`}, 6},
		{"two headers", []string{`<https://d/x?page=1>; rel="prev"`, `<https://d/x?page=7>; rel="next"`}, 7},
		{"multi-valued rel", []string{`<https://d/x?page=8>; rel="last next"`}, 8},
		{"no next", []string{`<https://d/x?page=1>; rel="prev"`}, 0},
		{"garbage", []string{`https://d/x?page=9; rel="next"`}, 0},
		{"none", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, page := parseLinkNext(tc.links)
			if page != tc.page {
				t.Errorf("page = %d, want %d", page, tc.page)
			}
		})
	}
}

func TestRetryGETOn5xx(t *testing.T) {
	c, mux, rec := setup(t, WithBackoff(100*time.Millisecond, time.Second))
	var calls atomic.Int32
	mux.HandleFunc("GET /tickets/7", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			writeJSON(w, 502, `{"description":"bad gateway"}`)
			return
		}
		writeJSON(w, 200, `{"ticket":{"id":7}}`)
	})
	tk, resp, err := c.Tickets.Get(t.Context(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if tk.ID != 7 || resp.Attempts != 3 || calls.Load() != 3 {
		t.Errorf("id %d attempts %d calls %d", tk.ID, resp.Attempts, calls.Load())
	}
	waits := rec.all()
	if len(waits) != 2 {
		t.Fatalf("waits = %v", waits)
	}
	// Exponential with jitter: [50ms,100ms] then [100ms,200ms].
	if waits[0] < 50*time.Millisecond || waits[0] > 100*time.Millisecond || waits[1] < 100*time.Millisecond || waits[1] > 200*time.Millisecond {
		t.Errorf("backoff waits = %v", waits)
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	c, mux, _ := setup(t, WithMaxAttempts(2))
	var calls atomic.Int32
	mux.HandleFunc("GET /tickets/7", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, 500, `{"description":"boom"}`)
	})
	_, resp, err := c.Tickets.Get(t.Context(), 7)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("err = %v", err)
	}
	if calls.Load() != 2 || resp.Attempts != 2 {
		t.Errorf("calls %d attempts %d", calls.Load(), resp.Attempts)
	}
}

func TestPOSTNotResentAfter5xx(t *testing.T) {
	c, mux, rec := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("POST /tickets/5/notes", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, 500, `{"description":"Internal error"}`)
	})
	_, _, err := c.Conversations.Note(t.Context(), 5, &NoteRequest{Body: "hi", Private: true})
	if calls.Load() != 1 {
		t.Fatalf("POST sent %d times, want 1", calls.Load())
	}
	if !errors.Is(err, ErrNotRetried) {
		t.Errorf("err = %v, want ErrNotRetried", err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Errorf("err = %v, want an *APIError 500", err)
	}
	if !strings.Contains(err.Error(), "may have been applied") || !strings.Contains(err.Error(), "add note to ticket 5") {
		t.Errorf("message = %q", err)
	}
	if len(rec.all()) != 0 {
		t.Errorf("waited %v", rec.all())
	}
}

// dropConn hijacks and closes the connection without answering.
func dropConn(t *testing.T, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Fatal("no hijacker")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
}

func TestPOSTNotResentAfterDroppedConnection(t *testing.T) {
	c, mux, _ := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("POST /tickets", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		dropConn(t, w)
	})
	_, resp, err := c.Tickets.Create(t.Context(), &TicketCreate{Subject: "s", Email: "a@example.com"})
	if err == nil {
		t.Fatal("no error")
	}
	if calls.Load() != 1 {
		t.Errorf("POST reached the server %d times, want 1", calls.Load())
	}
	if !errors.Is(err, ErrNotRetried) || !strings.Contains(err.Error(), "may have been applied") {
		t.Errorf("err = %v", err)
	}
	if resp == nil || resp.Attempts != 1 {
		t.Errorf("resp = %+v", resp)
	}
}

func TestGETRetriedAfterDroppedConnection(t *testing.T) {
	c, mux, rec := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("GET /tickets/9", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			dropConn(t, w)
			return
		}
		writeJSON(w, 200, `{"ticket":{"id":9}}`)
	})
	tk, resp, err := c.Tickets.Get(t.Context(), 9)
	if err != nil {
		t.Fatal(err)
	}
	if tk.ID != 9 || resp.Attempts < 2 || len(rec.all()) < 1 {
		t.Errorf("id %d attempts %d waits %v", tk.ID, resp.Attempts, rec.all())
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	clock := clockwork.NewFakeClock()
	rec := &sleepRecorder{}
	// The sleep records the wait and then waits on the fake clock.
	sleep := func(ctx context.Context, d time.Duration) error {
		if err := rec.sleep(ctx, d); err != nil {
			return err
		}
		select {
		case <-clock.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c, mux, _ := setup(t, WithClock(clock), WithSleep(sleep))
	var calls atomic.Int32
	mux.HandleFunc("POST /tickets", limitedOnce(&calls, "7", 201, `{"ticket":{"id":1}}`))
	done := make(chan error, 1)
	go func() {
		_, resp, err := c.Tickets.Create(t.Context(), &TicketCreate{Email: "a@example.com"})
		if err == nil && resp.Attempts != 2 {
			err = fmt.Errorf("attempts = %d", resp.Attempts)
		}
		done <- err
	}()
	// After the 429 the limiter holds every request for Retry-After (on the
	// injected clock): the retry waits until the clock has moved 7s.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Fatalf("retried before Retry-After: calls = %d", calls.Load())
	}
	clock.Advance(7 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rec.all(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits = %v, want [7s]", got)
	}
	if calls.Load() != 2 {
		t.Errorf("calls = %d (a 429 was not processed: the POST must be re-sent once)", calls.Load())
	}
}

// WithSleep drives the whole wait after a 429: once the sleep has waited
// Retry-After, the limiter's pause is over too, even on a clock that never
// moves (before, the retry then waited Retry-After again on the clock, in
// real time when only the sleep was injected).
func TestRateLimitPauseEndsWithSleep(t *testing.T) {
	clock := clockwork.NewFakeClock() // never advanced
	c, mux, rec := setup(t, WithClock(clock))
	var calls atomic.Int32
	mux.HandleFunc("GET /tickets/1", limitedOnce(&calls, "5", 200, `{"ticket":{"id":1}}`))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, resp, err := c.Tickets.Get(ctx, 1)
	if err != nil {
		t.Fatalf("after one 429 and a 5s sleep: %v", err)
	}
	if resp.Attempts != 2 || calls.Load() != 2 {
		t.Errorf("attempts %d, calls %d", resp.Attempts, calls.Load())
	}
	if got := rec.all(); len(got) != 1 || got[0] != 5*time.Second {
		t.Errorf("waits = %v, want [5s]", got)
	}
	// The pause is over for everybody, background and interactive.
	if _, _, err := c.Interactive().Tickets.Get(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Tickets.Get(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// A longer pause from a later 429 is not ended by an earlier one's sleep.
func TestLimiterResumeKeepsLaterPause(t *testing.T) {
	clock := clockwork.NewFakeClock()
	l := newLimiter(clock, 60, 10, time.Minute)
	first := l.pause(5 * time.Second)
	l.pause(20 * time.Second)
	l.resume(first)
	in := acquireAsync(t.Context(), l, true)
	queued(t, clock, l, 1)
	goesAfter(t, clock, in, 20*time.Second, "the later Retry-After")
}

func TestRateLimitDeadlineReturnsAtOnce(t *testing.T) {
	c, mux, rec := setup(t)
	mux.HandleFunc("GET /tickets/3", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.Header().Set("X-Ratelimit-Total", "100")
		w.Header().Set("X-Ratelimit-Remaining", "0")
		writeJSON(w, 429, `{"description":"Too many requests"}`)
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, resp, err := c.Tickets.Get(ctx, 3)
	if time.Since(start) > 4*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want *RateLimitError", err)
	}
	if rl.RetryAfter != 30*time.Second || rl.Rate.Total != 100 || rl.Rate.Remaining != 0 {
		t.Errorf("rate limit error = %+v", rl)
	}
	if !errors.Is(err, ErrRateLimited) {
		t.Error("not ErrRateLimited")
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 {
		t.Errorf("no *APIError inside")
	}
	if len(rec.all()) != 0 || resp.Attempts != 1 {
		t.Errorf("waited %v, attempts %d", rec.all(), resp.Attempts)
	}
	if !strings.Contains(err.Error(), "get ticket 3: 429") || !strings.Contains(err.Error(), "retry after 30s") {
		t.Errorf("message = %q", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"7", 7 * time.Second, true},
		{" 60 ", 60 * time.Second, true},
		{"0", 0, true},
		{"-3", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
		{"Wed, 01 Jan 2025 00:00:10 GMT", 10 * time.Second, true},    // IMF-fixdate
		{"Wednesday, 01-Jan-25 00:01:00 GMT", time.Minute, true},     // RFC 850, obsolete but accepted
		{"Wed Jan  1 00:00:42 2025", 42 * time.Second, true},         // asctime, obsolete but accepted
		{"2025-01-01T00:00:30Z", 30 * time.Second, true},             // the vendor schema's date-time
		{"2025-01-01T01:00:05+01:00", 5 * time.Second, true},         // date-time with an offset
		{"Tue, 31 Dec 2024 23:59:00 GMT", 0, true},                   // past: at once
		{"Thu, 01 Jan 2026 00:00:00 GMT", 86400 * time.Second, true}, // a year: capped at a day
		{"99999999999", 86400 * time.Second, true},                   // seconds: capped alike
		{"Wed, 01 Jan 2025 00:00:10", 0, false},                      // no zone
		{"2025-01-01 00:00:30", 0, false},
		{"soon", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v,%v want %v,%v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	cred := base64.StdEncoding.EncodeToString([]byte(testKey + ":X"))
	c, mux, _ := setup(t, WithMaxAttempts(1))
	mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) {
		// A misbehaving proxy echoing the request's credentials.
		writeJSON(w, 401, fmt.Sprintf(`{"code":"invalid_credentials","message":"bad key %s (%s)"}`, testKey, r.Header.Get("Authorization")))
	})
	mux.HandleFunc("GET /tickets/2", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 400, fmt.Sprintf(`{"description":"Validation failed %s","errors":[{"field":"%s","message":"%s","code":"%s"}]}`, testKey, testKey, cred, testKey))
	})
	mux.HandleFunc("GET /tickets/3", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, "upstream said: Authorization: "+r.Header.Get("Authorization"))
	})
	var errs []error
	for id := int64(1); id <= 3; id++ {
		_, _, err := c.Tickets.Get(t.Context(), id)
		errs = append(errs, err)
	}
	// Transport errors embed the URL: a refused connection, a bad host.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, base := range []string{"http://" + addr, "http://nonexistent.invalid"} {
		dc, err := New(base, testKey, WithMaxAttempts(1))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = dc.Tickets.Get(t.Context(), 1)
		errs = append(errs, err)
		_, _, err = dc.Tickets.Create(t.Context(), &TicketCreate{Email: "a@example.com"})
		errs = append(errs, err)
	}
	// Bad base URLs and options.
	_, err = New("https://"+testKey+"@example.com", testKey)
	errs = append(errs, err)
	_, err = New("://"+testKey, testKey)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		var apiErr *APIError
		texts := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
		if errors.As(err, &apiErr) {
			texts = append(texts, apiErr.Error(), fmt.Sprintf("%+v", *apiErr))
		}
		for _, s := range texts {
			if strings.Contains(s, testKey) || strings.Contains(s, cred) {
				t.Errorf("case %d: error text contains the API key: %s", i, s)
			}
		}
	}
	var apiErr *APIError
	if !errors.As(errs[0], &apiErr) || !errors.Is(errs[0], ErrUnauthorized) || apiErr.Code != "invalid_credentials" {
		t.Errorf("401 error = %#v", errs[0])
	}
}

func TestLoggerNeverLogsCredentials(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, mux, _ := setup(t, WithLogger(logger))
	mux.HandleFunc("GET /tickets/filter", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"tickets":[],"total":0}`)
	})
	if _, _, err := c.Tickets.Filter(t.Context(), "priority:4", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{`"method":"GET"`, `"path":"/tickets/filter"`, `"status":200`, `"attempt":1`, `"duration"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
	cred := base64.StdEncoding.EncodeToString([]byte(testKey + ":X"))
	if strings.Contains(out, testKey) || strings.Contains(out, cred) || strings.Contains(out, "Authorization") || strings.Contains(out, "priority") {
		t.Errorf("log leaks credentials or query: %s", out)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestPerPageValidatedBeforeSending(t *testing.T) {
	c, mux, _ := setup(t)
	var calls atomic.Int32
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	for _, pp := range []int{-1, 101, 1000} {
		_, _, err := c.Tickets.List(t.Context(), &TicketListOptions{ListOptions: ListOptions{PerPage: pp}})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "per_page must be between 1 and 100") {
			t.Errorf("per_page %d: err = %v", pp, err)
		}
		_, _, err = c.Groups.List(t.Context(), &ListOptions{PerPage: pp})
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("groups per_page %d: err = %v", pp, err)
		}
	}
	_, _, err := c.Agents.List(t.Context(), &AgentListOptions{ListOptions: ListOptions{Page: -2}})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("page -2: err = %v", err)
	}
	if calls.Load() != 0 {
		t.Errorf("%d requests sent", calls.Load())
	}
}

func TestEncodeQuery(t *testing.T) {
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	ws := int64(0)
	got, err := encodeQuery(&TicketListOptions{
		Filter: "watching", UpdatedSince: &since, OrderType: "asc", Email: "a+b@example.com",
		Include: []string{"stats", "requester"}, WorkspaceID: &ws, OrderBy: "created at",
		ListOptions: ListOptions{Page: 2, PerPage: 100},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "email=a%2Bb%40example.com&filter=watching&include=stats,requester&order_by=created%20at&order_type=asc&page=2&per_page=100&updated_since=2025-03-01T11%3A00%3A00Z&workspace_id=0"
	if got != want {
		t.Errorf("query =\n %s\nwant\n %s", got, want)
	}
	if q, _ := encodeQuery((*TicketListOptions)(nil)); q != "" {
		t.Errorf("nil options = %q", q)
	}
}

func TestContextCancelled(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"ticket":{"id":1}}`) })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := c.Tickets.Get(ctx, 1)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"tickets":[]}`) })
	mux.HandleFunc("GET /tickets/2", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"ticket":`) })
	if _, _, err := c.Tickets.Get(t.Context(), 1); err == nil || !strings.Contains(err.Error(), `no "ticket"`) {
		t.Errorf("missing envelope: %v", err)
	}
	if _, _, err := c.Tickets.Get(t.Context(), 2); err == nil || !strings.Contains(err.Error(), "get ticket 2: decode response") {
		t.Errorf("broken JSON: %v", err)
	}
}

func TestInteractiveTwin(t *testing.T) {
	c, _, _ := setup(t)
	ic := c.Interactive()
	if !ic.IsInteractive() || c.IsInteractive() {
		t.Fatal("interactive flags wrong")
	}
	if ic.limiter != c.limiter {
		t.Error("interactive client does not share the limiter")
	}
	if ic.Tickets.client != ic || c.Tickets.client != c {
		t.Error("services point at the wrong client")
	}
	if ic.Interactive() != ic || ic.Background().IsInteractive() {
		t.Error("Interactive/Background not idempotent")
	}
	if _, err := url.Parse(ic.BaseURL()); err != nil {
		t.Error(err)
	}
}

func TestPOSTRetriedWhenConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rec := &sleepRecorder{}
	c, err := New("http://"+addr, testKey, WithMaxAttempts(3), WithSleep(rec.sleep))
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := c.Tickets.Create(t.Context(), &TicketCreate{Email: "a@example.com"})
	if err == nil || errors.Is(err, ErrNotRetried) {
		t.Fatalf("err = %v: a refused connection never reached the desk", err)
	}
	if resp.Attempts != 3 || len(rec.all()) != 2 {
		t.Errorf("attempts %d waits %v", resp.Attempts, rec.all())
	}
}

func FuzzParseLinkNext(f *testing.F) {
	f.Add(`<https://d.freshservice.com/api/v2/tickets?page=2>; rel="next"`)
	f.Add(`<https://d/x?page=1>; rel="prev", <https://d/x?page=3>;rel=next`)
	f.Add(`<>; rel=`)
	f.Fuzz(func(t *testing.T, s string) {
		target, page := parseLinkNext([]string{s})
		if page < 0 {
			t.Errorf("negative page %d from %q", page, s)
		}
		if page > 0 && target == "" {
			t.Errorf("page %d without a target from %q", page, s)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0", "-1", "Wed, 01 Jan 2025 00:00:10 GMT", "1e9", " 5"} {
		f.Add(s)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if d < 0 || (!ok && d != 0) {
			t.Errorf("parseRetryAfter(%q) = %v, %v", s, d, ok)
		}
	})
}

// leakyTransport fails like a misbehaving proxy or transport whose error
// quotes the request's Authorization header.
type leakyTransport struct{}

func (leakyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("proxy refused %s with %s", r.URL, r.Header.Get("Authorization"))
}

// Every log line, at the most verbose level and on every failure path
// (echoed credentials in error bodies, 5xx, 429, dropped connections,
// transport errors quoting the header), is free of the API key.
func TestLogNeverContainsAPIKeyOnFailures(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug - 8}))
	c, mux, _ := setup(t, WithLogger(logger), WithMaxAttempts(2))
	mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 401, fmt.Sprintf(`{"code":"invalid_credentials","message":"bad key %s (%s)"}`, testKey, r.Header.Get("Authorization")))
	})
	mux.HandleFunc("GET /tickets/2", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		io.WriteString(w, "upstream said: Authorization: "+r.Header.Get("Authorization"))
	})
	mux.HandleFunc("GET /tickets/3", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, 429, `{"description":"slow down `+testKey+`"}`)
	})
	mux.HandleFunc("POST /tickets", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		dropConn(t, w)
	})
	if _, _, err := c.Tickets.Create(t.Context(), &TicketCreate{Email: "a@example.com"}); err == nil {
		t.Error("dropped POST: no error")
	}
	for id := int64(1); id <= 3; id++ { // the 429 last: its pause holds the client
		if _, _, err := c.Tickets.Get(t.Context(), id); err == nil {
			t.Errorf("ticket %d: no error", id)
		}
	}
	leaky, err := New("https://desk.example.com", testKey, WithLogger(logger), WithMaxAttempts(1),
		WithHTTPClient(&http.Client{Transport: leakyTransport{}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := leaky.Agents.Me(t.Context()); err == nil {
		t.Error("leaky transport: no error")
	} else if strings.Contains(err.Error(), testKey) {
		t.Errorf("error leaks the key: %v", err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if n := strings.Count(out, "sdclient request"); n != 7 {
		t.Errorf("%d log lines, want one per attempt (7):\n%s", n, out)
	}
	if !strings.Contains(out, "proxy refused") {
		t.Errorf("transport error not logged:\n%s", out)
	}
	cred := base64.StdEncoding.EncodeToString([]byte(testKey + ":X"))
	if strings.Contains(out, testKey) || strings.Contains(out, cred) {
		t.Errorf("log leaks the API key:\n%s", out)
	}
}

func TestBackgroundBudgetIsRateMinusReserve(t *testing.T) {
	for _, tc := range []struct{ rate, reserve, want int }{{60, -1, 48}, {100, 30, 70}, {2, -1, 1}} {
		opts := []Option{WithRatePerMinute(tc.rate)}
		if tc.reserve >= 0 {
			opts = append(opts, WithReserve(tc.reserve))
		}
		c, err := New("https://desk.example", "k", opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.BackgroundBudget(); got != tc.want {
			t.Errorf("rate %d reserve %d: budget %d, want %d", tc.rate, tc.reserve, got, tc.want)
		}
		if got := c.Interactive().BackgroundBudget(); got != tc.want {
			t.Errorf("interactive twin reports %d", got)
		}
	}
}
