package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

var t0 = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

// recNotifier records alerts and answers AlreadyAlerted from them (and
// from the groups a groupNotifier over it posted).
type recNotifier struct {
	mu     sync.Mutex
	alerts []firing.Alert
	groups []firing.AlertGroup
	fail   int // fail this many alerts (not delivered)
	// loseGroups: post this many groups, then answer with an error as if
	// the answer was lost (the message is there).
	loseGroups int
}

// groupNotifier is a recNotifier that posts grouped alerts as one message.
type groupNotifier struct{ *recNotifier }

func (n groupNotifier) AlertGroup(_ context.Context, g firing.AlertGroup) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failNext() {
		return firing.ErrNotDelivered
	}
	n.groups = append(n.groups, g)
	if n.loseGroups > 0 {
		n.loseGroups--
		return context.DeadlineExceeded
	}
	return nil
}

// groupList returns the groups posted.
func (n *recNotifier) groupList() []firing.AlertGroup {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]firing.AlertGroup(nil), n.groups...)
}

// messages is how many top-level messages were posted: single alerts and
// groups.
func (n *recNotifier) messages() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.alerts) + len(n.groups)
}

// named counts, per ticket, the messages that name it for rule ("": any).
func (n *recNotifier) named(rule string) map[int64]int {
	out := map[int64]int{}
	for _, a := range n.list() {
		if rule == "" || a.Rule == rule {
			out[a.Ticket.ID]++
		}
	}
	for _, g := range n.groupList() {
		for _, a := range g.Alerts {
			if rule == "" || a.Rule == rule {
				out[a.Ticket.ID]++
			}
		}
	}
	return out
}

func (n *recNotifier) Alert(_ context.Context, a firing.Alert) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failNext() {
		return firing.ErrNotDelivered
	}
	n.alerts = append(n.alerts, a)
	return nil
}

func (n *recNotifier) AlreadyAlerted(_ context.Context, channel, key string) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range n.alerts {
		if a.Channel == channel && a.Key == key {
			return true, nil
		}
	}
	for _, g := range n.groups {
		for _, a := range g.Alerts {
			if g.Channel == channel && a.Key == key {
				return true, nil
			}
		}
	}
	return false, nil
}

func (n *recNotifier) list() []firing.Alert {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]firing.Alert(nil), n.alerts...)
}

func (n *recNotifier) forTicket(id int64) []firing.Alert {
	var out []firing.Alert
	for _, a := range n.list() {
		if a.Ticket != nil && a.Ticket.ID == id {
			out = append(out, a)
		}
	}
	return out
}

type env struct {
	t      *testing.T
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	st     *store.Store
	stPath string // the SQLite file of st
	notif  *recNotifier
	reg    *prometheus.Registry
	s      *Scheduler
}

func testLogger(testing.TB) *slog.Logger { return testkit.Logger() }

func mustRules(t testing.TB, yaml string) *rules.Set {
	t.Helper()
	return testkit.Rules(t, yaml)
}

func newEnv(t *testing.T, rulesYAML string, opts ...Option) *env {
	t.Helper()
	return newEnvSim(t, nil, rulesYAML, opts...)
}

// newEnvSim is newEnv with options for the simulated desk.
func newEnvSim(t *testing.T, simOpts []sdsim.Option, rulesYAML string, opts ...Option) *env {
	t.Helper()
	return newEnvNotifier(t, simOpts, false, rulesYAML, opts...)
}

// newGroupEnv is newEnv with a notifier that posts grouped alerts
// (GroupNotifier).
func newGroupEnv(t *testing.T, rulesYAML string, opts ...Option) *env {
	t.Helper()
	return newEnvNotifier(t, nil, true, rulesYAML, opts...)
}

// newEnvNotifier is newEnvSim whose notifier groups alerts when grouping.
func newEnvNotifier(t *testing.T, simOpts []sdsim.Option, grouping bool, rulesYAML string, opts ...Option) *env {
	t.Helper()
	e := &env{t: t, notif: &recNotifier{}, reg: prometheus.NewRegistry()}
	var notifier firing.Notifier = e.notif
	if grouping {
		notifier = groupNotifier{e.notif}
	}
	e.clk, e.sim = testkit.FakeDesk(t, t0, simOpts...)
	e.client = testkit.DeskClient(t, e.sim)
	e.stPath = filepath.Join(t.TempDir(), "state.db")
	st := openStore(t, e.stPath)
	e.st = st
	e.s = e.another(firing.ClientDesk(e.client), rulesYAML, st, notifier, append([]Option{WithRegistry(e.reg)}, opts...)...)
	return e
}

// another is a scheduler beside e's (e.s is the first): the rules of
// rulesYAML over desk d, recording in st and alerting through n, on e's
// clock, with opts.
func (e *env) another(d firing.Desk, rulesYAML string, st *store.Store, n firing.Notifier, opts ...Option) *Scheduler {
	e.t.Helper()
	s, err := New(testLogger(e.t), d, mustRules(e.t, rulesYAML), st, n, append([]Option{WithClock(e.clk), WithSingleton(false)}, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// runOnce runs one cycle of every job and returns the results.
func (e *env) runOnce() []cycle.Result {
	e.t.Helper()
	res, err := e.s.RunOnce(e.t.Context())
	if err != nil {
		e.t.Fatalf("RunOnce: %v", err)
	}
	return res
}

func allComplete(res []cycle.Result) bool {
	for _, r := range res {
		if !r.Complete {
			return false
		}
	}
	return true
}

// notesWith returns the notes of a ticket whose body contains s.
func (e *env) notesWith(id int64, s string) []sdsim.Conversation {
	var out []sdsim.Conversation
	for _, c := range e.sim.Desk.Conversations(id) {
		if strings.Contains(c.Body, s) {
			out = append(out, c)
		}
	}
	return out
}

// metricValue reads a counter or gauge (testutil is not usable here: it
// needs a module go.sum lacks).
func metricValue(t testing.TB, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatalf("metric is neither a counter nor a gauge")
	return 0
}

// eventually waits until cond holds, checking it every 10ms on a ticker,
// and fails the test after timeout. The conditions it waits for are set
// by goroutines the scheduler starts (a background full sync, the cycle it
// kicks, gocron's runs), which signal nothing a test could receive.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// openStore opens the state store at dsn, closed when the test ends.
func openStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	return testkit.Store(t, dsn)
}

// noteFault makes the desk answer the notes POSTed to ticket id with a
// fault of kind, count times (0: once).
func (e *env) noteFault(id int64, kind sdsim.FaultKind, count int) {
	e.sim.Desk.InjectFault(sdsim.Fault{Kind: kind, Count: count, Method: "POST", PathPrefix: fmt.Sprintf("/api/v2/tickets/%d/notes", id)})
}

// afterLeases runs n cycles, each a lease after the one before: pending
// firings are taken over and resumed.
func (e *env) afterLeases(n int) {
	for range n {
		e.clk.Advance(DefaultLease)
		e.runOnce()
	}
}

// lostNote is what a test of a note whose answer the desk lost expects:
// the first cycle fires fired firings and leaves before notes of text on
// the ticket; after leases cycles a lease apart there are after.
type lostNote struct {
	text          string
	fired, before int
	leases, after int
}

// resumeLostNote runs the cycle in which the note of ticket id is lost (the
// test has set the fault) and the cycles that resume it, and fails t
// unless they leave what want says.
func (e *env) resumeLostNote(t *testing.T, id int64, want lostNote) {
	t.Helper()
	if res := e.runOnce(); res[0].Fired != want.fired {
		t.Fatalf("first cycle fired %d, want %d", res[0].Fired, want.fired)
	}
	if n := len(e.notesWith(id, want.text)); n != want.before {
		t.Fatalf("%d notes %q after the lost answer, want %d", n, want.text, want.before)
	}
	e.afterLeases(want.leases)
	if n := len(e.notesWith(id, want.text)); n != want.after {
		t.Errorf("%d notes %q after resuming, want %d", n, want.text, want.after)
	}
}

// addTickets adds n tickets of priority to the desk, subjects t0, t1, ...
func (e *env) addTickets(n, priority int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: priority}).ID
	}
	return ids
}

// vipRules note every open ticket of priority 4, any number per cycle.
const vipRules = `version: 1
rules:
  - name: vip
    query: "status:open AND priority:4"
    max_firings_per_cycle: 1000
    actions: [{note: "vip"}]
`

// failNext reports whether the next message fails, counting it (caller
// holds mu).
func (n *recNotifier) failNext() bool {
	if n.fail > 0 {
		n.fail--
		return true
	}
	return false
}

// next runs the cycle a minute later.
func (e *env) next() []cycle.Result {
	e.clk.Advance(time.Minute)
	return e.runOnce()
}

// assign assigns ticket id to agent on the desk (0: unassigns it).
func (e *env) assign(id, agent int64) {
	e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.ResponderID = agent })
}

// testdata returns the text of testdata/name; it panics when the file
// cannot be read (the tests cannot run without it).
func testdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// lastFilterQuery is the query of the last filter search the desk
// answered (unescaped), "" when none.
func (e *env) lastFilterQuery() string {
	var q string
	for _, r := range e.sim.Desk.Requests() {
		if r.Path == "/api/v2/tickets/filter" {
			q, _ = url.QueryUnescape(r.RawQuery)
		}
	}
	return q
}
