package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// waitLeaderMetric polls /metrics until deskbot_scheduler_leader reads want.
func waitLeaderMetric(t *testing.T, addr string, want int) {
	t.Helper()
	line := fmt.Sprintf("\ndeskbot_scheduler_leader %d\n", want)
	pollMetrics(t, addr, 60*time.Second, func(body string) bool { return strings.Contains(body, line) })
}

// Two replicas on one PostgreSQL state: exactly one runs the scheduler, and
// the other takes over when the leader dies. A deskbot with its state in
// another schema of the same database leads its own scheduler meanwhile.
func TestReplicasElectOneLeaderPerSchema(t *testing.T) {
	dsnA := pgtest.SchemaDSN(t)
	dsnB := pgtest.SchemaDSN(t)
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 20))
	defer sim.Close()
	replica := func(dsn string) (*proc, string) {
		addr := freeAddr(t)
		env, _ := deskOn(t, sim.URL, "version: 1\nrules:\n  - name: n\n    query: \"priority:4\"\n    every: 1s\n    actions: [{note: \"seen\"}]\n",
			"DESKBOT_STATE", dsn, "DESKBOT_HTTP_ADDR", addr)
		return start(t, env), addr
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
	rule := "  - name: %s\n    query: \"priority:1 OR priority:2 OR priority:3 OR priority:4\"\n    every: 1s\n    actions: [{note: \"seen\"}]\n"
	addr := freeAddr(t)
	env, _ := deskOn(t, sim.URL, "version: 1\nrules:\n"+fmt.Sprintf(rule, "busy"),
		"DESKBOT_HTTP_ADDR", addr, "DESKBOT_DESK_RATE_PER_MIN", "10", "DESKBOT_DESK_LIST_RATE_PER_MIN", "10")
	rulesFile := env["DESKBOT_RULES"]
	p := start(t, env)
	// Wait until the background budget is spent (the mirror's full sync
	// has 10 pages to read): of 10 requests a minute, 2 are the
	// interactive reserve, so background callers stop at 8.
	// Every endpoint's line ({id} in a label too).
	re := regexp.MustCompile(`(?m)^deskbot_desk_requests_total\{.*\} (\d+)$`)
	pollMetrics(t, addr, 60*time.Second, func(body string) bool {
		n := 0
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			var k int
			fmt.Sscan(m[1], &k)
			n += k
		}
		return n >= 8
	})
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
	noted := make(chan struct{}, 1)
	target, _ := url.Parse(sim.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	desk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/notes") {
			select {
			case noted <- struct{}{}:
			default:
			}
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

	env, _ := deskOn(t, desk.URL, "version: 1\nrules:\n  - name: n\n    query: \"agent_id:0\"\n    every: 1s\n    actions: [{note: \"seen\"}]\n")
	p := start(t, env)
	select {
	case <-noted:
	case <-time.After(60 * time.Second):
		t.Fatal("the rule never sent a note")
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

// With SQLite one process runs the scheduler: a second deskbot with rules
// on the same file is refused at start with one line naming DESKBOT_STATE,
// the lock file and the first one's pid.
func TestSecondProcessOnOneSQLiteFileIsRefused(t *testing.T) {
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 5))
	defer sim.Close()
	env, _ := deskOn(t, sim.URL, "version: 1\nrules:\n  - name: n\n    query: \"priority:4\"\n    actions: [{note: \"seen\"}]\n")
	state := env["DESKBOT_STATE"]
	first := start(t, env)
	waitFor(t, "scheduler start", first.stderr, regexp.MustCompile(`scheduler started`), 60*time.Second)
	second := start(t, env)
	if code := second.wait(60 * time.Second); code != 1 {
		t.Fatalf("second process: exit %d, want 1", code)
	}
	want := fmt.Sprintf("deskbot: DESKBOT_STATE: lock scheduler state %s.lock: another deskbot (pid %d) already runs the scheduler on this database; with SQLite only one process may, use PostgreSQL for several replicas: locked by another process",
		state, first.cmd.Process.Pid)
	lines := strings.Split(strings.TrimSpace(second.stderr.String()), "\n")
	if last := lines[len(lines)-1]; last != want {
		t.Fatalf("second process's last line:\n%s\nwant\n%s", last, want)
	}
}
