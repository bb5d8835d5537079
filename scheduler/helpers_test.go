package scheduler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
	alerts []Alert
	groups []AlertGroup
	fail   int // fail this many alerts (not delivered)
	// loseGroups: post this many groups, then answer with an error as if
	// the answer was lost (the message is there).
	loseGroups int
}

// groupNotifier is a recNotifier that posts grouped alerts as one message.
type groupNotifier struct{ *recNotifier }

func (n groupNotifier) AlertGroup(_ context.Context, g AlertGroup) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failNext() {
		return ErrNotDelivered
	}
	n.groups = append(n.groups, g)
	if n.loseGroups > 0 {
		n.loseGroups--
		return context.DeadlineExceeded
	}
	return nil
}

// groupList returns the groups posted.
func (n *recNotifier) groupList() []AlertGroup {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]AlertGroup(nil), n.groups...)
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

func (n *recNotifier) Alert(_ context.Context, a Alert) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failNext() {
		return ErrNotDelivered
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

func (n *recNotifier) list() []Alert {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Alert(nil), n.alerts...)
}

func (n *recNotifier) forTicket(id int64) []Alert {
	var out []Alert
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

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func mustRules(t testing.TB, yaml string) *rules.Set {
	t.Helper()
	set, err := rules.Load("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("load rules: %v", err)
	}
	return set
}

func clientFor(t testing.TB, sim *sdsim.Server, opts ...sdclient.Option) *sdclient.Client {
	t.Helper()
	base := []sdclient.Option{
		sdclient.WithRatePerMinute(1000000),
		sdclient.WithMaxAttempts(2),
		sdclient.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }),
	}
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
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
	e := &env{t: t, clk: clockwork.NewFakeClockAt(t0), notif: &recNotifier{}, reg: prometheus.NewRegistry()}
	var notifier Notifier = e.notif
	if grouping {
		notifier = groupNotifier{e.notif}
	}
	e.sim = sdsim.NewServer(append([]sdsim.Option{sdsim.WithClock(e.clk.Now)}, simOpts...)...)
	t.Cleanup(e.sim.Close)
	e.client = clientFor(t, e.sim)
	e.stPath = filepath.Join(t.TempDir(), "state.db")
	st := openStore(t, e.stPath)
	e.st = st
	base := []Option{WithClock(e.clk), WithRegistry(e.reg), WithSingleton(false)}
	s, err := New(testLogger(t), ClientDesk(e.client), mustRules(t, rulesYAML), st, notifier, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	return e
}

// runOnce runs one cycle of every job and returns the results.
func (e *env) runOnce() []CycleResult {
	e.t.Helper()
	res, err := e.s.RunOnce(e.t.Context())
	if err != nil {
		e.t.Fatalf("RunOnce: %v", err)
	}
	return res
}

func allComplete(res []CycleResult) bool {
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
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
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
func (e *env) next() []CycleResult {
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

// threadPoster records what is posted in threads.
type threadPoster struct {
	mu    sync.Mutex
	posts []string // "channel/ts: text"
}

func (p *threadPoster) PostInThread(_ context.Context, channel, ts, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts = append(p.posts, channel+"/"+ts+": "+text)
	return nil
}

func (p *threadPoster) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.posts...)
}

// emptyRules has one rule that matches nothing: live threads follow the
// change feed that the rules' cycles read.
const emptyRules = `version: 1
rules:
  - name: nothing
    query: "priority:4 AND priority:1"
    actions: [{note: "never"}]
`

// A linked ticket's public replies and status changes reach its thread,
// each once; private notes and what came from the thread do not; a
// restarted scheduler on the same store posts nothing again; unlinked
// tickets cost no conversation reads.
func TestThreadsDeskToThread(t *testing.T) {
	p := &threadPoster{}
	e := newEnv(t, emptyRules)
	ctx := t.Context()
	mustDo := func(_ any, _ *sdclient.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The scheduler under test follows threads; e.s (without) only
	// provides the environment. The store stamps links with the desk's
	// (fake) clock.
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "threads.db"), store.WithClock(e.clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.st = st
	s, err := New(testLogger(t), ClientDesk(e.client), mustRules(t, emptyRules), e.st, nil,
		WithClock(e.clk), WithSingleton(false), WithThreads(e.st, p))
	if err != nil {
		t.Fatal(err)
	}
	linked := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "printer on fire", Status: sdclient.StatusOpen}).ID
	other := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "unlinked", Status: sdclient.StatusOpen}).ID
	if _, err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.st.LinkThread(ctx, linked, "C1", "111.222"); err != nil || !ok {
		t.Fatalf("LinkThread = %v, %v", ok, err)
	}
	e.clk.Advance(time.Minute)
	mustDo(e.client.Conversations.Reply(ctx, linked, &sdclient.ReplyRequest{Body: "<p>We are on it &amp; ordering toner.</p>"}))
	mustDo(e.client.Conversations.Note(ctx, linked, &sdclient.NoteRequest{Body: "internal: it is the fuser", Private: true}))
	marks, err := e.st.Marks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustDo(e.client.Conversations.Note(ctx, linked, &sdclient.NoteRequest{Body: marks.FromThread(linked, "from the thread", "from the thread"), Private: false}))
	mustDo(e.client.Conversations.Reply(ctx, other, &sdclient.ReplyRequest{Body: "not linked"}))
	if _, err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"C1/111.222: Reply on the desk:\nWe are on it & ordering toner."}
	if got := p.list(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("thread posts = %q; want %q", got, want)
	}

	e.clk.Advance(time.Minute)
	resolved := sdclient.StatusResolved
	mustDo(e.client.Tickets.Update(ctx, linked, &sdclient.TicketUpdate{Status: &resolved}))
	if _, err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	want = append(want, "C1/111.222: Status on the desk: Open → Resolved")
	if got := p.list(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("thread posts = %q; want %q", got, want)
	}

	// A restart (a second replica) on the same store re-reads the feed's
	// overlap and posts nothing twice.
	s2, err := New(testLogger(t), ClientDesk(e.client), mustRules(t, emptyRules), e.st, nil,
		WithClock(e.clk), WithSingleton(false), WithThreads(e.st, p))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := p.list(); len(got) != len(want) {
		t.Fatalf("after a restart, thread posts = %q; want %q", got, want)
	}
}

func TestThreadPostsText(t *testing.T) {
	c := &sdclient.Conversation{ID: 9, Incoming: true, Body: "<div>Still broken<br>since 9am</div>"}
	if got := conversationPost(c); got != "The requester wrote (by e-mail):\nStill broken\nsince 9am" {
		t.Errorf("conversationPost = %q", got)
	}
	if got := statusName(17); got != "status 17" {
		t.Errorf("statusName(17) = %q", got)
	}
}

// BenchmarkThreadsCost measures what live threads cost at 10,000 open
// tickets, 100 desk updates a minute of which 5% are on linked tickets
// (each linked one getting a public reply): desk requests and Slack posts
// per minute of changes, beyond the feed itself.
func BenchmarkThreadsCost(b *testing.B) {
	for _, linkedPct := range []int{0, 5} {
		b.Run(fmt.Sprintf("linked=%d%%", linkedPct), func(b *testing.B) { benchThreads(b, linkedPct) })
	}
}

func benchThreads(b *testing.B, linkedPct int) {
	p := &threadPoster{}
	clk := clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	b.Cleanup(sim.Close)
	client := clientFor(b, sim)
	st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"), store.WithClock(clk.Now))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := b.Context()
	ids := make([]int64, 10000)
	for i := range ids {
		ids[i] = sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Status: sdclient.StatusOpen}).ID
	}
	s, err := New(testLogger(b), ClientDesk(client), mustRules(b, emptyRules), st, nil,
		WithClock(clk), WithSingleton(false), WithThreads(st, p))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RunCycle(ctx); err != nil {
		b.Fatal(err)
	}
	linked := func(i int) bool { return linkedPct > 0 && i%(100/linkedPct) == 0 }
	for i, id := range ids {
		if linked(i) {
			if _, err := st.LinkThread(ctx, id, "C1", fmt.Sprintf("%d.0", id)); err != nil {
				b.Fatal(err)
			}
		}
	}
	var requests, posts int
	b.ResetTimer()
	for n := range b.N {
		clk.Advance(time.Minute)
		base := n * 100 % len(ids)
		for k := range 100 {
			i := base + k
			if linked(i) {
				sim.Desk.AddConversation(sdsim.Conversation{TicketID: ids[i], Body: "reply", Source: 0})
			}
			sim.Desk.UpdateTicket(ids[i], func(x *sdsim.Ticket) { x.Priority = 1 + (n+k)%4 })
		}
		before := len(p.list())
		c, err := s.RunCycle(ctx)
		if err != nil {
			b.Fatal(err)
		}
		requests += c.Requests
		posts += len(p.list()) - before
	}
	b.ReportMetric(float64(requests)/float64(b.N)*60, "desk-req/h")
	b.ReportMetric(float64(posts)/float64(b.N)*60, "slack-posts/h")
}
