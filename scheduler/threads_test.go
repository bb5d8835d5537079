package scheduler

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

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
	mustDo(e.client.Conversations.Note(ctx, linked, &sdclient.NoteRequest{Body: store.FromThread("from the thread"), Private: false}))
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
