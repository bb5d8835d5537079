package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// A SIGHUP reload is logged once; a failed one keeps the old rules and
// shows in /metrics and in the "rules" check of /readyz until a good one.
func TestReloadRulesLogsOnceAndReportsFailures(t *testing.T) {
	sim := sdsim.NewServer()
	t.Cleanup(sim.Close)
	client, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	good := "version: 1\nrules:\n  - name: a\n    query: \"priority:4\"\n    actions: [{note: x}]\n"
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	loader := &rulesLoader{client: client, logger: logger}
	first, err := loader.load(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	var set atomic.Pointer[rules.Set]
	set.Store(first)
	st, err := store.Open(t.Context(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sched, err := scheduler.New(logger, firing.ClientDesk(client), first, st, firing.LogNotifier{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	at := time.Date(2026, 3, 10, 14, 7, 0, 0, time.UTC)
	rs := newReloadStatus(reg, func() time.Time { return at })

	// A bad file: the old rules stay, the failure shows.
	bad := "version: 1\nrules:\n  - name: a\n    query: \"priority:\"\n    actions: [{note: x}]\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	reloadRules(t.Context(), logger, loader, path, &set, sched, false, rs)
	if set.Load() != first {
		t.Error("a bad reload replaced the rules")
	}
	if n := value(t, rs.failures); n != 1 {
		t.Errorf("deskbot_rules_reload_failures_total = %v, want 1", n)
	}
	if v := value(t, rs.success); v != 0 {
		t.Errorf("deskbot_rules_last_reload_success = %v, want 0", v)
	}
	err = rs.check(context.Background())
	var d degraded
	if !asDegraded(err, &d) || !strings.HasPrefix(err.Error(), "last reload failed at 14:07: "+path+":4:") {
		t.Errorf("/readyz rules = %v, want degraded: last reload failed at 14:07: %s:4:…", err, path)
	}

	// A good file: logged once, the failure cleared.
	logs.Reset()
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	reloadRules(t.Context(), logger, loader, path, &set, sched, false, rs)
	if set.Load() == first {
		t.Error("a good reload kept the old rules")
	}
	if err := rs.check(context.Background()); err != nil {
		t.Errorf("/readyz rules after a good reload = %v, want ok", err)
	}
	if v := value(t, rs.success); v != 1 {
		t.Errorf("deskbot_rules_last_reload_success = %v, want 1", v)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "reload") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "SIGHUP: rules reloaded") {
		t.Errorf("a reload logged %d lines, want one:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

func asDegraded(err error, d *degraded) bool {
	v, ok := err.(degraded)
	*d = v
	return ok
}

// value is the value of a counter or gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if c := out.GetCounter(); c != nil {
		return c.GetValue()
	}
	return out.GetGauge().GetValue()
}

// The embedded simulator limits requests like a real desk, so that its
// X-Ratelimit-* headers (and deskbot_desk_rate_limit_remaining) are real.
func TestEmbeddedDeskSendsRateLimitHeaders(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct{ budget, total int }{{60, embeddedRateLimit}, {300, 300}} {
		url, key, stop, err := deskEndpoint(&config{RatePerMin: c.budget}, logger)
		if err != nil {
			t.Fatal(err)
		}
		client, err := sdclient.New(url, key)
		if err != nil {
			stop()
			t.Fatal(err)
		}
		_, resp, err := client.Agents.Me(t.Context())
		stop()
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("X-Ratelimit-Total"); got != strconv.Itoa(c.total) {
			t.Errorf("budget %d: X-Ratelimit-Total = %q, want %d", c.budget, got, c.total)
		}
		if resp.Rate.Remaining < 0 || resp.Rate.Remaining >= c.total {
			t.Errorf("budget %d: rate remaining %d, want a real count below %d", c.budget, resp.Rate.Remaining, c.total)
		}
	}
}

// A rules file that filters on a custom field loads at a start while the
// desk is down: the fields read at an earlier start are kept in the state
// store. Without them, the same start refuses the file.
func TestRulesLoaderKeepsCustomFieldsAcrossStarts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	file := "version: 1\nrules:\n  - name: prod\n    query: \"environment:'Production'\"\n    actions: [{note: x}]\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logger := slog.New(slog.DiscardHandler)

	sim := sdsim.NewServer()
	sim.Desk.AddCustomField(sdsim.CustomField{Name: "environment", Kind: sdsim.FieldString, Choices: []string{"Production", "Staging"}})
	up, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&rulesLoader{client: up, cache: st, logger: logger}).load(t.Context(), path); err != nil {
		t.Fatalf("load with the desk up: %v", err)
	}
	sim.Close()

	down, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&rulesLoader{client: down, cache: st, logger: logger}).load(t.Context(), path); err != nil {
		t.Errorf("load at a start with the desk down, fields kept: %v", err)
	}
	if _, err := (&rulesLoader{client: down, logger: logger}).load(t.Context(), path); err == nil {
		t.Error("without the kept fields the file loaded: the test shows nothing")
	}
}
