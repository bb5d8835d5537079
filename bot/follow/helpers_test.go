package follow

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

var t0 = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

// env is a scheduler over the desk simulator and a SQLite store, with the
// followers a test gives it.
type env struct {
	t      *testing.T
	rules  string // the rules file of its schedulers
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	st     *store.Store
	alerts *recAlerts
	s      *scheduler.Scheduler
}

// testLogger logs to the test's output (shown when it fails, or with -v).
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// quiet is the logger of the benchmarks.
var quiet = slog.New(slog.DiscardHandler)

func mustRules(t testing.TB, yaml string) *rules.Set {
	t.Helper()
	return testkit.Rules(t, yaml)
}

// openStore is a SQLite state store on clk, closed when the test ends.
func openStore(t testing.TB, clk clockwork.Clock) *store.Store {
	t.Helper()
	return testkit.Store(t, filepath.Join(t.TempDir(), "state.db"), store.WithClock(clk.Now))
}

// newEnv starts an env on rulesYAML; followers gives the scheduler's
// options that plug the followers under test in (it may use e.client and
// e.st).
func newEnv(t *testing.T, rulesYAML string, followers func(e *env) []scheduler.Option) *env {
	t.Helper()
	e := &env{t: t, rules: rulesYAML, alerts: &recAlerts{}}
	e.clk, e.sim = testkit.FakeDesk(t, t0)
	e.client = testkit.DeskClient(t, e.sim)
	e.st = openStore(t, e.clk)
	e.s = e.newScheduler(followers)
	return e
}

// newScheduler is another scheduler on e's desk and store (a restart, a
// second replica).
func (e *env) newScheduler(followers func(e *env) []scheduler.Option) *scheduler.Scheduler {
	e.t.Helper()
	opts := []scheduler.Option{scheduler.WithClock(e.clk), scheduler.WithRegistry(prometheus.NewRegistry()), scheduler.WithSingleton(false)}
	if followers != nil {
		opts = append(opts, followers(e)...)
	}
	s, err := scheduler.New(testLogger(e.t), firing.ClientDesk(e.client), mustRules(e.t, e.rules), e.st, e.alerts, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// runOnce runs one cycle of every job.
func (e *env) runOnce() {
	e.t.Helper()
	if _, err := e.s.RunOnce(e.t.Context()); err != nil {
		e.t.Fatalf("RunOnce: %v", err)
	}
}

// next runs the cycle a minute later.
func (e *env) next() {
	e.clk.Advance(time.Minute)
	e.runOnce()
}

// afterLeases runs n cycles, each a lease after the one before: pending
// firings are taken over and resumed.
func (e *env) afterLeases(n int) {
	for range n {
		e.clk.Advance(scheduler.DefaultLease)
		e.runOnce()
	}
}

// sent records what a fake was given, for the scheduler's goroutines
// and the test alike.
type sent[T any] struct {
	mu    sync.Mutex
	items []T
}

func (s *sent[T]) add(x T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, x)
}

func (s *sent[T]) list() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]T(nil), s.items...)
}

// has reports whether something sent satisfies f.
func (s *sent[T]) has(f func(T) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.items, f)
}

// recAlerts is the scheduler's notifier: it records alerts and answers
// AlreadyAlerted from them.
type recAlerts struct{ sent[firing.Alert] }

func (n *recAlerts) Alert(_ context.Context, a firing.Alert) error {
	n.add(a)
	return nil
}

func (n *recAlerts) AlreadyAlerted(_ context.Context, channel, key string) (bool, error) {
	return n.has(func(a firing.Alert) bool { return a.Channel == channel && a.Key == key }), nil
}

// deskReads counts the simulator's requests whose path starts with
// prefix.
func deskReads(sim *sdsim.Server, prefix string) int {
	n := 0
	for _, r := range sim.Desk.Requests() {
		if strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}
