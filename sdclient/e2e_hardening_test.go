package sdclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// A page of tickets over the client's size limit fails at once, after one
// request, and the default limit reads the same page.
func TestE2EResponseSizeLimit(t *testing.T) {
	s, c, _ := e2e(t, sdsim.DefaultAPIKey, sdsim.WithGenerated(1, 150))
	ctx := t.Context()
	since := time.Now().AddDate(-5, 0, 0)
	opts := &sdclient.TicketListOptions{UpdatedSince: &since, ListOptions: sdclient.ListOptions{PerPage: 100}}
	page, _, err := c.Tickets.List(ctx, opts)
	if err != nil || len(page) != 100 {
		t.Fatalf("default limit: %d tickets, %v", len(page), err)
	}
	small, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithMaxResponseBytes(8<<10))
	if err != nil {
		t.Fatal(err)
	}
	s.Desk.ResetRequests()
	page, resp, err := small.Tickets.List(ctx, opts)
	if !errors.Is(err, sdclient.ErrResponseTooLarge) || err.Error() != "sdclient: list tickets: response body exceeds the size limit of 8 KiB" || page != nil {
		t.Errorf("over the limit: %d tickets, %v", len(page), err)
	}
	if n := len(s.Desk.Requests()); n != 1 || resp.Attempts != 1 {
		t.Errorf("the desk saw %d requests, want 1", n)
	}
	// ListAll stops at the error rather than trying again.
	var errs int
	for _, err := range small.Tickets.ListAll(ctx, opts) {
		if err != nil {
			errs++
		}
	}
	if n := len(s.Desk.Requests()); errs != 1 || n != 2 {
		t.Errorf("ListAll: %d errors, %d requests in all, want 1 and 2", errs, n)
	}
}

// The desk's address answers every request with a redirect to the
// simulator on another port of 127.0.0.1: no request reaches the simulator
// (so neither do the credentials), reads and writes fail with ErrRedirected,
// and the write is known not applied.
func TestE2ERedirectToAnotherOrigin(t *testing.T) {
	s, _, w := e2e(t, sdsim.DefaultAPIKey, sdsim.WithGenerated(1, 5))
	var auth atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			auth.Add(1)
		}
		http.Redirect(rw, r, s.URL+r.URL.RequestURI(), http.StatusMovedPermanently)
	}))
	t.Cleanup(front.Close)
	c, err := sdclient.New(front.URL, sdsim.DefaultAPIKey, sdclient.WithSleep(w.sleep), sdclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	s.Desk.ResetRequests()
	ctx := t.Context()
	_, _, err = c.Tickets.Get(ctx, 1)
	if !errors.Is(err, sdclient.ErrRedirected) || !strings.Contains(err.Error(), "redirected GET to "+s.URL+"/api/v2/tickets/1 (301)") {
		t.Errorf("GET: %v", err)
	}
	_, _, err = c.Conversations.Note(ctx, 1, &sdclient.NoteRequest{Body: "hello", Private: true})
	if !errors.Is(err, sdclient.ErrRedirected) || !errors.Is(err, sdclient.ErrInvalidInput) || errors.Is(err, sdclient.ErrNotRetried) {
		t.Errorf("POST: %v", err)
	}
	want := "sdclient: add note to ticket 1: the desk redirected POST to " + s.URL + "/api/v2/tickets/1/notes (301); deskbot does not follow redirects of writes"
	if err == nil || err.Error() != want {
		t.Errorf("POST: %v\nwant %s", err, want)
	}
	if reqs := s.Desk.Requests(); len(reqs) != 0 {
		t.Errorf("the simulator (another origin) was sent %d requests: %+v", len(reqs), reqs)
	}
	if auth.Load() != 2 {
		t.Errorf("the desk's address saw credentials %d times, want 2", auth.Load())
	}
}

// The desk moved its API within its origin (/old/api/v2 -> /api/v2): a GET
// follows, credentials and all; a write is not re-sent and not turned into
// a GET.
func TestE2ERedirectWithinOrigin(t *testing.T) {
	s, _, w := e2e(t, sdsim.DefaultAPIKey, sdsim.WithGenerated(1, 5))
	simURL, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(simURL)
	front := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/old"); ok {
			http.Redirect(rw, r, rest+"?"+r.URL.RawQuery, http.StatusMovedPermanently)
			return
		}
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(front.Close)
	c, err := sdclient.New(front.URL+"/old", sdsim.DefaultAPIKey, sdclient.WithSleep(w.sleep), sdclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s.Desk.ResetRequests()
	tk, _, err := c.Tickets.Get(ctx, 1, "conversations")
	if err != nil || tk.ID != 1 {
		t.Fatalf("GET through a same-origin redirect: %+v, %v", tk, err)
	}
	reqs := s.Desk.Requests()
	if len(reqs) != 1 || reqs[0].AgentID != sdsim.DefaultAgentID || reqs[0].RawQuery != "include=conversations" {
		t.Errorf("the desk saw %+v, want one authenticated GET", reqs)
	}
	s.Desk.ResetRequests()
	_, _, err = c.Conversations.Note(ctx, 1, &sdclient.NoteRequest{Body: "hello", Private: true})
	if !errors.Is(err, sdclient.ErrRedirected) || !errors.Is(err, sdclient.ErrInvalidInput) {
		t.Errorf("POST: %v", err)
	}
	if reqs := s.Desk.Requests(); len(reqs) != 0 {
		t.Errorf("the redirected POST reached the desk: %+v", reqs)
	}
	after, err := sdclient.New(s.URL, sdsim.DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := after.Tickets.Get(ctx, 1, "conversations")
	if err != nil || len(got.Conversations) != len(tk.Conversations) {
		t.Errorf("conversations %d -> %d (%v): the note was applied", len(tk.Conversations), len(got.Conversations), err)
	}
}

// TestRetryAfterForms: a 429's Retry-After is honoured as seconds, as an
// HTTP date and as the vendor schema's date-time, a date counted from the
// desk's clock (its Date header), however far ours is from it.
func TestRetryAfterForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		form sdsim.RetryAfterForm
		skew time.Duration // our clock minus the desk's
	}{
		{"seconds", sdsim.RetryAfterSeconds, 0},
		{"IMF-fixdate", sdsim.RetryAfterHTTPDate, 0},
		{"IMF-fixdate, our clock 10 minutes ahead", sdsim.RetryAfterHTTPDate, 10 * time.Minute},
		{"IMF-fixdate, our clock 10 minutes behind", sdsim.RetryAfterHTTPDate, -10 * time.Minute},
		{"RFC 3339 date-time", sdsim.RetryAfterDateTime, 0},
		{"RFC 3339 date-time, our clock an hour ahead", sdsim.RetryAfterDateTime, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deskClock := clockwork.NewFakeClockAt(time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC))
			s := sdsim.NewServer(sdsim.WithClock(deskClock.Now))
			t.Cleanup(s.Close)
			ours := clockwork.NewFakeClockAt(deskClock.Now().Add(tc.skew))
			w := &waits{}
			c, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithClock(ours), sdclient.WithRatePerMinute(1_000_000),
				sdclient.WithSleep(w.sleep),
				sdclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second, Transport: &contractTransport{t: t, inner: http.DefaultTransport}}))
			if err != nil {
				t.Fatal(err)
			}
			tk := s.Desk.AddTicket(sdsim.Ticket{Subject: "x", RequesterID: sdsim.DefaultAgentID})
			s.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultRateLimit, RetryAfter: 7, RetryAfterForm: tc.form, PathPrefix: "/api/v2/tickets/"})
			_, resp, err := c.Tickets.Get(t.Context(), tk.ID)
			if err != nil || resp.Attempts != 2 {
				t.Fatalf("after one 429: %v (attempts %v)", err, resp)
			}
			if ws := w.all(); len(ws) != 1 || ws[0] != 7*time.Second {
				t.Errorf("waited %v, want 7s once", ws)
			}
		})
	}
}
