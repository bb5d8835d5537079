package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/jackc/pgx/v5"
)

// pgSchema creates a fresh schema for one test and returns the DSN that
// selects it.
func pgSchema(t *testing.T, name string) string {
	t.Helper()
	dsn := os.Getenv("DESKBOT_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("DESKBOT_TEST_POSTGRES is unset: no PostgreSQL to run replicas on")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// leaderMetric polls /metrics until deskbot_scheduler_leader reads want.
func waitLeaderMetric(t *testing.T, addr string, want int) {
	t.Helper()
	line := fmt.Sprintf("\ndeskbot_scheduler_leader %d\n", want)
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := client.Get("http://" + addr + "/metrics"); err == nil { // not listening yet: retry
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), line) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: deskbot_scheduler_leader never read %d", addr, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Two replicas on one PostgreSQL state: exactly one runs the scheduler, and
// the other takes over when the leader dies. A deskbot with its state in
// another schema of the same database leads its own scheduler meanwhile.
func TestReplicasElectOneLeaderPerSchema(t *testing.T) {
	dsnA := pgSchema(t, "deskbot_cmd_a")
	dsnB := pgSchema(t, "deskbot_cmd_b")
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 20))
	defer sim.Close()
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte("version: 1\nrules:\n  - name: n\n    query: \"priority:4\"\n    every: 1s\n    actions: [{note: \"seen\"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	replica := func(dsn string) (*proc, string) {
		addr := freeAddr(t)
		return start(t, map[string]string{
			"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey,
			"DESKBOT_RULES": rulesFile, "DESKBOT_STATE": dsn, "DESKBOT_HTTP_ADDR": addr,
		}), addr
	}
	first, firstAddr := replica(dsnA)
	waitLeaderMetric(t, firstAddr, 1)
	second, secondAddr := replica(dsnA)
	_, otherAddr := replica(dsnB)
	waitLeaderMetric(t, otherAddr, 1)
	waitFor(t, "scheduler start", second.stderr, regexp.MustCompile(`scheduler started`), 60*time.Second)
	waitLeaderMetric(t, secondAddr, 0)
	waitLeaderMetric(t, firstAddr, 1)

	_ = first.cmd.Process.Kill()
	first.wait(30 * time.Second)
	waitLeaderMetric(t, secondAddr, 1)
	waitFor(t, "takeover", second.stderr, regexp.MustCompile(`became the scheduler leader`), 60*time.Second)
}

// A SIGHUP reload answers promptly even when the scheduler's polls have spent
// the whole background request budget: it must not queue for a minute
// behind them (an operator is waiting, and SIGTERM waits behind it too).
func TestReloadDoesNotWaitForTheBackgroundBudget(t *testing.T) {
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 300))
	defer sim.Close()
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "rules.yaml")
	rule := "  - name: %s\n    query: \"priority:1 OR priority:2 OR priority:3 OR priority:4\"\n    every: 1s\n    actions: [{note: \"seen\"}]\n"
	if err := os.WriteFile(rulesFile, []byte("version: 1\nrules:\n"+fmt.Sprintf(rule, "busy")), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := start(t, map[string]string{
		"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey,
		"DESKBOT_RULES": rulesFile, "DESKBOT_STATE": filepath.Join(dir, "state.db"), "DESKBOT_HTTP_ADDR": addr,
		"DESKBOT_DESK_RATE_PER_MIN": "10", "DESKBOT_DESK_LIST_RATE_PER_MIN": "10",
	})
	// Wait until the background budget is spent (the mirror's full sync
	// has 10 pages to read): of 10 requests a minute, 2 are the
	// interactive reserve, so background callers stop at 8.
	client := &http.Client{Timeout: 5 * time.Second}
	re := regexp.MustCompile(`(?m)^deskbot_desk_requests_total\{[^}]*\} (\d+)$`)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n := 0
		if resp, err := client.Get("http://" + addr + "/metrics"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, m := range re.FindAllStringSubmatch(string(body), -1) {
				var k int
				fmt.Sscan(m[1], &k)
				n += k
			}
		}
		if n >= 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduler sent %d requests, never spending the budget", n)
		}
	}
	if err := os.WriteFile(rulesFile, []byte("version: 1\nrules:\n"+fmt.Sprintf(rule, "busy")+fmt.Sprintf(rule, "second")), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGHUP)
	// Queued behind the polls, the reload would wait about a minute for the
	// window to free; through the reserve it is immediate, and a busy
	// reserve makes it wait customFieldsTimeout (10s) at most.
	waitFor(t, "reload", p.stderr, regexp.MustCompile(`SIGHUP: rules reloaded.*rules=2`), 40*time.Second)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}

// SIGTERM finishes in-flight actions within the stop bound; a second signal
// while it does ends the process at once.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 40))
	defer sim.Close()
	// A desk that never answers a note: the action stays in flight.
	release := make(chan struct{})
	var notes atomic.Int32
	target, _ := url.Parse(sim.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	desk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/notes") {
			notes.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer desk.Close()
	defer close(release)

	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte("version: 1\nrules:\n  - name: n\n    query: \"agent_id:0\"\n    every: 1s\n    actions: [{note: \"seen\"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, map[string]string{
		"DESKBOT_DESK_URL": desk.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey,
		"DESKBOT_RULES": rulesFile, "DESKBOT_STATE": filepath.Join(dir, "state.db"),
	})
	for deadline := time.Now().Add(60 * time.Second); notes.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the rule never sent a note")
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, "graceful stop", p.stderr, regexp.MustCompile(`stopping: finishing in-flight work`), 30*time.Second)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	// A graceful stop would wait for the note, then exit 0; the second
	// signal kills the process instead.
	if code := p.wait(60 * time.Second); code == 0 {
		t.Fatal("exit 0: the second signal waited for the graceful stop")
	}
	if strings.Contains(p.stderr.String(), "msg=stopped") {
		t.Fatal("the graceful stop completed despite the second signal")
	}
}
