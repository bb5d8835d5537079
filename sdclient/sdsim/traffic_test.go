package sdsim_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

func TestRateLimit(t *testing.T) {
	clock := newClock()
	s := newServer(t, sdsim.WithClock(clock.Now), sdsim.WithRateLimit(5))
	tk := s.Desk.AddTicket(sdsim.Ticket{RequesterID: sdsim.DefaultAgentID})

	r := get(t, s, "/tickets").want(t, 200)
	if r.header.Get("X-Ratelimit-Total") != "5" || r.header.Get("X-Ratelimit-Remaining") != "4" || r.header.Get("X-Ratelimit-Used-CurrentRequest") != "1" {
		t.Errorf("headers: %v", r.header)
	}
	// Failed requests count too.
	get(t, s, "/tickets/9999").want(t, 404)
	do(t, s, req{path: "/tickets", key: "wrong"}).want(t, 401)
	// include= costs extra on a view: 1 + 1 per embed.
	clock.Advance(10 * time.Second)
	r = get(t, s, fmt.Sprintf("/tickets/%d?include=conversations", tk.ID)).want(t, 200)
	if r.header.Get("X-Ratelimit-Used-CurrentRequest") != "2" || r.header.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("include cost headers: %v", r.header)
	}
	r = get(t, s, "/tickets").want(t, 429)
	if ra := r.header.Get("Retry-After"); ra != "50" {
		t.Errorf("Retry-After = %q, want 50 (the first credits expire 60s after they were spent)", ra)
	}
	if r.header.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("429 headers: %v", r.header)
	}
	// A refused request spends nothing: after 50s the first three credits are back.
	clock.Advance(50 * time.Second)
	r = get(t, s, "/tickets").want(t, 200)
	if r.header.Get("X-Ratelimit-Remaining") != "2" {
		t.Errorf("after the window: remaining %q, want 2", r.header.Get("X-Ratelimit-Remaining"))
	}
	// A list include costs 1 + 2 per embed.
	clock.Advance(time.Minute)
	r = get(t, s, "/tickets?include=stats").want(t, 200)
	if r.header.Get("X-Ratelimit-Used-CurrentRequest") != "3" {
		t.Errorf("list include cost = %q, want 3", r.header.Get("X-Ratelimit-Used-CurrentRequest"))
	}
	// Unlimited desks send no rate headers.
	u := newServer(t)
	if h := get(t, u, "/tickets").header.Get("X-Ratelimit-Total"); h != "" {
		t.Errorf("unlimited desk sent X-Ratelimit-Total %q", h)
	}
}

func TestFaults(t *testing.T) {
	s := newServer(t)
	d := s.Desk

	t.Run("429 with Retry-After, only matching requests", func(t *testing.T) {
		d.InjectFault(sdsim.Fault{Kind: sdsim.FaultRateLimit, Count: 2, Method: "GET", PathPrefix: "/api/v2/tickets/filter", RetryAfter: 7})
		get(t, s, "/tickets").want(t, 200)
		for range 2 {
			r := get(t, s, filterPath("status:2", "")).want(t, 429)
			if r.header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
			}
		}
		get(t, s, filterPath("status:2", "")).want(t, 200)
	})
	t.Run("500", func(t *testing.T) {
		d.InjectFault(sdsim.Fault{Kind: sdsim.FaultServerError})
		get(t, s, "/agents/me").want(t, 500)
		get(t, s, "/agents/me").want(t, 200)
	})
	t.Run("timeout until the client gives up", func(t *testing.T) {
		d.ResetRequests()
		d.InjectFault(sdsim.Fault{Kind: sdsim.FaultTimeout, Hold: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		hr, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/v2/tickets", nil)
		hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
		_, err := s.Client().Do(hr)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the client's deadline", err)
		}
		// The desk logs the held request once it sees the client gone.
		wctx, wcancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer wcancel()
		if log, err := d.AwaitRequests(wctx, func(l []sdsim.Request) bool {
			return len(l) == 1 && l[0].Fault == sdsim.FaultTimeout && l[0].Status == 0
		}); err != nil {
			t.Fatalf("the held request was not logged as given up: %v (log %+v)", err, log)
		}
	})
	t.Run("timeout up to the hold", func(t *testing.T) {
		d.InjectFault(sdsim.Fault{Kind: sdsim.FaultTimeout, Hold: 20 * time.Millisecond})
		get(t, s, "/tickets").want(t, 504)
	})
	t.Run("dropped connection", func(t *testing.T) {
		id := d.AddTicket(sdsim.Ticket{Subject: "drop"}).ID
		for _, tc := range []struct {
			kind  sdsim.FaultKind
			notes int // the note was applied or not
		}{{sdsim.FaultDrop, 0}, {sdsim.FaultDropAfter, 1}} {
			d.InjectFault(sdsim.Fault{Kind: tc.kind, Method: "POST"})
			hr, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v2/tickets/%d/notes", s.URL, id),
				strings.NewReader(`{"body":"`+tc.kind.String()+`"}`))
			hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
			hr.Header.Set("Content-Type", "application/json")
			res, err := s.Client().Do(hr)
			if err == nil {
				res.Body.Close()
				t.Fatalf("%v: dropped connection answered %d", tc.kind, res.StatusCode)
			}
			n := 0
			for _, c := range d.Conversations(id) {
				if c.Body == tc.kind.String() {
					n++
				}
			}
			if n != tc.notes {
				t.Errorf("%v: %d notes on the ticket, want %d", tc.kind, n, tc.notes)
			}
		}
		get(t, s, "/agents/me").want(t, 200)
	})
	t.Run("clear", func(t *testing.T) {
		d.InjectFault(sdsim.Fault{Kind: sdsim.FaultServerError, Count: 5})
		d.ClearFaults()
		get(t, s, "/agents/me").want(t, 200)
	})
	t.Run("close releases held requests", func(t *testing.T) {
		s2 := sdsim.NewServer()
		s2.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultTimeout, Hold: time.Hour})
		done := make(chan struct{})
		go func() {
			defer close(done)
			hr, _ := http.NewRequest("GET", s2.URL+"/api/v2/tickets", nil)
			hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
			if res, err := s2.Client().Do(hr); err == nil {
				res.Body.Close()
			}
		}()
		s2.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Close left a held request hanging")
		}
	})
}

func TestLatency(t *testing.T) {
	s := newServer(t, sdsim.WithLatency(60*time.Millisecond))
	start := time.Now()
	get(t, s, "/agents/me").want(t, 200)
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Errorf("answered after %v, want at least the 60ms latency", el)
	}
	s.Desk.SetLatency(0)
	get(t, s, "/agents/me").want(t, 200)
}

func TestRequestLog(t *testing.T) {
	clock := newClock()
	s := newServer(t, sdsim.WithClock(clock.Now))
	get(t, s, "/tickets?per_page=5").want(t, 200)
	get(t, s, "/tickets/77").want(t, 404)
	log := s.Desk.Requests()
	if len(log) != 2 {
		t.Fatalf("log = %+v", log)
	}
	want := sdsim.Request{Method: "GET", Path: "/api/v2/tickets", RawQuery: "per_page=5", Status: 200, Time: clock.Now(), AgentID: sdsim.DefaultAgentID, Cost: 1}
	if log[0] != want || log[1].Status != 404 || log[1].Path != "/api/v2/tickets/77" {
		t.Errorf("log = %+v", log)
	}
	s.Desk.ResetRequests()
	if n := len(s.Desk.Requests()); n != 0 {
		t.Errorf("%d requests after reset", n)
	}
}

func TestConcurrentRequests(t *testing.T) {
	s := newServer(t, sdsim.WithGenerated(9, 300))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				var hr *http.Request
				switch i % 3 {
				case 0:
					hr, _ = http.NewRequest("POST", s.URL+"/api/v2/tickets", stringsReader(fmt.Sprintf(`{"email":"load%d@example.com","subject":"load"}`, g)))
					hr.Header.Set("Content-Type", "application/json")
				case 1:
					hr, _ = http.NewRequest("GET", s.URL+"/api/v2"+filterPath("priority:4", ""), nil)
				default:
					hr, _ = http.NewRequest("PUT", s.URL+"/api/v2/tickets/"+strconv.Itoa(1+g*10+i), stringsReader(`{"priority":3}`))
					hr.Header.Set("Content-Type", "application/json")
				}
				hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
				res, err := s.Client().Do(hr)
				if err != nil {
					errs <- err
					return
				}
				res.Body.Close()
				if res.StatusCode >= 300 {
					errs <- fmt.Errorf("%s %s: %d", hr.Method, hr.URL.Path, res.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(s.Desk.TicketIDs()); n != 300+8*5 {
		t.Errorf("%d tickets, want 340", n)
	}
}

// TestHandlerBehindAnyServer serves the Handler on a plain http.Server.
func TestHandlerBehindAnyServer(t *testing.T) {
	d := sdsim.New()
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second}
	ln := listen(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	hr, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/v2/agents/me", nil)
	hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("status %d", res.StatusCode)
	}
}
