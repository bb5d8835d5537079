package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// JSON logs show durations as an operator reads them, not as nanoseconds.
func TestJSONLogDurationsAreText(t *testing.T) {
	var buf bytes.Buffer
	logger := newLogger(&buf, slog.LevelInfo, "json")
	logger.Info("stopping", "timeout", 15*time.Second, slog.Group("g", "lease", 2*time.Minute), "count", 3)
	var got struct {
		Timeout string         `json:"timeout"`
		G       map[string]any `json:"g"`
		Count   int            `json:"count"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if got.Timeout != "15s" || got.G["lease"] != "2m0s" || got.Count != 3 {
		t.Fatalf("got %s", buf.String())
	}
}

func TestOneLine(t *testing.T) {
	in := "DESKBOT_STATE: failed to connect to `user=x database=y`:\n\t127.0.0.1:1: refused\n\t[::1]:1: refused\n"
	want := "DESKBOT_STATE: failed to connect to `user=x database=y`: 127.0.0.1:1: refused; [::1]:1: refused"
	if got := oneLine(in); got != want {
		t.Fatalf("oneLine = %q, want %q", got, want)
	}
}

// /readyz asks the desk at most every 30s while it answers (each probe costs
// budget), but retries a failing desk every 5s, so readiness comes back soon
// after the desk does.
func TestCachedCheckRechecksFailuresSooner(t *testing.T) {
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time { return clock }
	calls, fail := 0, false
	check := cachedCheck(30*time.Second, 5*time.Second, now, func(context.Context) error {
		calls++
		if fail {
			return errors.New("down")
		}
		return nil
	})
	step := func(d time.Duration, wantCalls int, wantErr bool) {
		t.Helper()
		clock = clock.Add(d)
		err := check(t.Context())
		if calls != wantCalls || (err != nil) != wantErr {
			t.Fatalf("after +%s: calls %d err %v, want calls %d err %v", d, calls, err, wantCalls, wantErr)
		}
	}
	step(0, 1, false)
	fail = true
	step(29*time.Second, 1, false) // still cached
	step(time.Second, 2, true)     // 30s: asks again, fails
	fail = false
	step(4*time.Second, 2, true) // failure cached for 5s
	step(time.Second, 3, false)  // 5s later: seen back
	step(29*time.Second, 3, false)
}

// A DESKBOT_DESK_URL that reaches a server but not a desk says to check the
// URL, rather than that the desk cannot be reached.
func TestCheckDeskNotADesk(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	c, err := sdclient.New(srv.URL+"/helpdesk", "k")
	if err != nil {
		t.Fatal(err)
	}
	_, err = checkDesk(t.Context(), c)
	if err == nil || !strings.Contains(err.Error(), "answers 404 to GET /agents/me: is DESKBOT_DESK_URL the desk's base URL") {
		t.Fatalf("err = %v", err)
	}
}

// A degraded finding is shown in /readyz but leaves the process ready; a
// failing check makes it unready.
func TestReadyzDegradedStaysReady(t *testing.T) {
	serve := func(checks []readyCheck) (int, map[string]string) {
		t.Helper()
		o := newOpsServer(nil, newRegistry(), checks, slog.New(slog.DiscardHandler))
		rec := httptest.NewRecorder()
		o.srv.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		var got map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%v: %s", err, rec.Body.String())
		}
		return rec.Code, got
	}
	ok := func(context.Context) error { return nil }
	slow := func(context.Context) error { return degraded{errors.New(`rule "x" went over its run-time budget`)} }
	down := func(context.Context) error { return errors.New("not connected") }
	code, got := serve([]readyCheck{{"store", ok}, {"rule_budgets", slow}})
	if code != http.StatusOK || got["rule_budgets"] != `degraded: rule "x" went over its run-time budget` || got["store"] != "ok" {
		t.Errorf("degraded: %d %v", code, got)
	}
	code, got = serve([]readyCheck{{"chat", down}, {"rule_budgets", slow}})
	if code != http.StatusServiceUnavailable || got["chat"] != "not connected" {
		t.Errorf("failing: %d %v", code, got)
	}
}
