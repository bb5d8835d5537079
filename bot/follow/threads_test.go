package follow

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// threadPoster records what is posted in threads: "channel/ts: text".
type threadPoster struct{ sent[string] }

func (p *threadPoster) PostInThread(_ context.Context, channel, ts, text string) error {
	p.add(channel + "/" + ts + ": " + text)
	return nil
}

// emptyRules has one rule that matches nothing: live threads follow the
// change feed that the rules' cycles read.
const emptyRules = `version: 1
rules:
  - name: nothing
    query: "priority:4 AND priority:1"
    actions: [{note: "never"}]
`

// withThreads plugs live threads posting through p into a scheduler.
func withThreads(p ThreadPoster) func(e *env) []scheduler.Option {
	return func(e *env) []scheduler.Option {
		return []scheduler.Option{scheduler.WithSubscriber(NewThreads(firing.ClientDesk(e.client), e.st, p, e.st, WithLogger(testLogger(e.t))))}
	}
}

// A linked ticket's public replies and status changes reach its thread,
// each once; private notes and what came from the thread do not; a
// restarted scheduler on the same store posts nothing again; unlinked
// tickets cost no conversation reads.
func TestThreadsDeskToThread(t *testing.T) {
	p := &threadPoster{}
	e := newEnv(t, emptyRules, withThreads(p))
	ctx := t.Context()
	mustDo := func(_ any, _ *sdclient.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	linked := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "printer on fire", Status: sdclient.StatusOpen}).ID
	other := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "unlinked", Status: sdclient.StatusOpen}).ID
	e.runOnce()
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
	before := deskReads(e.sim, fmt.Sprintf("/api/v2/tickets/%d/conversations", other))
	e.runOnce()
	want := []string{"C1/111.222: Reply on the desk:\nWe are on it & ordering toner."}
	if got := p.list(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("thread posts = %q; want %q", got, want)
	}
	if got := deskReads(e.sim, fmt.Sprintf("/api/v2/tickets/%d/conversations", other)); got != before {
		t.Errorf("the unlinked ticket's conversations were read %d times", got-before)
	}

	e.clk.Advance(time.Minute)
	resolved := sdclient.StatusResolved
	mustDo(e.client.Tickets.Update(ctx, linked, &sdclient.TicketUpdate{Status: &resolved}))
	e.runOnce()
	want = append(want, "C1/111.222: Status on the desk: Open → Resolved")
	if got := p.list(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("thread posts = %q; want %q", got, want)
	}

	// A restart (a second replica) on the same store re-reads the feed's
	// overlap and posts nothing twice.
	s2 := e.newScheduler(withThreads(p))
	if _, err := s2.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	e.runOnce()
	if got := p.list(); len(got) != len(want) {
		t.Fatalf("after a restart, thread posts = %q; want %q", got, want)
	}
}

// In a dry run the thread's posts are logged, not posted, and the
// thread's mark stays: a real run later posts them.
func TestThreadsDryRun(t *testing.T) {
	p := &threadPoster{}
	e := newEnv(t, emptyRules, func(e *env) []scheduler.Option {
		return []scheduler.Option{scheduler.WithSubscriber(NewThreads(firing.ClientDesk(e.client), e.st, p, e.st, WithDryRun(true)))}
	})
	ctx := t.Context()
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "printer", Status: sdclient.StatusOpen}).ID
	e.runOnce()
	if _, err := e.st.LinkThread(ctx, id, "C1", "1.2"); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	if _, _, err := e.client.Conversations.Reply(ctx, id, &sdclient.ReplyRequest{Body: "on it"}); err != nil {
		t.Fatal(err)
	}
	e.runOnce()
	if got := p.list(); len(got) != 0 {
		t.Fatalf("a dry run posted %q", got)
	}
	e.s = e.newScheduler(withThreads(p))
	e.clk.Advance(time.Minute)
	if _, _, err := e.client.Conversations.Reply(ctx, id, &sdclient.ReplyRequest{Body: "fixed"}); err != nil {
		t.Fatal(err)
	}
	e.runOnce()
	want := "C1/1.2: Reply on the desk:\non it|C1/1.2: Reply on the desk:\nfixed"
	if got := strings.Join(p.list(), "|"); got != want {
		t.Fatalf("after the dry run, thread posts = %q; want %q", got, want)
	}
}

func TestThreadPostsText(t *testing.T) {
	for _, tc := range []struct {
		c    sdclient.Conversation
		want string
	}{
		{sdclient.Conversation{ID: 9, Incoming: true, Body: "<div>Still broken<br>since 9am</div>"}, "The requester wrote (by e-mail):\nStill broken\nsince 9am"},
		{sdclient.Conversation{ID: 10, Source: sdclient.ConversationSourceNote, BodyText: "Toner \u2060ordered\u200b"}, "Public note on the desk:\nToner ordered"},
		{sdclient.Conversation{ID: 11, Body: "<p>a &lt; b</p>"}, "Reply on the desk:\na < b"},
	} {
		if got := conversationPost(&tc.c); got != tc.want {
			t.Errorf("conversationPost(%d) = %q; want %q", tc.c.ID, got, tc.want)
		}
	}
}

// BenchmarkThreadsCost measures what live threads cost at 10,000 open
// tickets, 100 desk updates a minute of which 5% are on linked tickets
// (each linked one getting a public reply): desk requests (the feed's and
// the threads' conversation reads) and Slack posts per hour of changes.
func BenchmarkThreadsCost(b *testing.B) {
	for _, linkedPct := range []int{0, 5} {
		b.Run(fmt.Sprintf("linked=%d%%", linkedPct), func(b *testing.B) { benchThreads(b, linkedPct) })
	}
}

func benchThreads(b *testing.B, linkedPct int) {
	p := &threadPoster{}
	e := &env{rules: emptyRules}
	e.clk = clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(e.clk.Now))
	b.Cleanup(sim.Close)
	e.client = testkit.DeskClient(b, sim)
	e.st = openStore(b, e.clk)
	ctx := b.Context()
	ids := make([]int64, 10000)
	for i := range ids {
		ids[i] = sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Status: sdclient.StatusOpen}).ID
	}
	s, err := scheduler.New(quiet, firing.ClientDesk(e.client), mustRules(b, emptyRules), e.st, nil,
		scheduler.WithClock(e.clk), scheduler.WithSingleton(false), scheduler.WithRegistry(prometheus.NewRegistry()),
		scheduler.WithSubscriber(NewThreads(firing.ClientDesk(e.client), e.st, p, e.st)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RunCycle(ctx); err != nil {
		b.Fatal(err)
	}
	linked := func(i int) bool { return linkedPct > 0 && i%(100/linkedPct) == 0 }
	for i, id := range ids {
		if linked(i) {
			if _, err := e.st.LinkThread(ctx, id, "C1", fmt.Sprintf("%d.0", id)); err != nil {
				b.Fatal(err)
			}
		}
	}
	var requests, posts int
	b.ResetTimer()
	for n := range b.N {
		e.clk.Advance(time.Minute)
		base := n * 100 % len(ids)
		for k := range 100 {
			i := base + k
			if linked(i) {
				sim.Desk.AddConversation(sdsim.Conversation{TicketID: ids[i], Body: "reply", Source: 0})
			}
			sim.Desk.UpdateTicket(ids[i], func(x *sdsim.Ticket) { x.Priority = 1 + (n+k)%4 })
		}
		before, reqs := len(p.list()), len(sim.Desk.Requests())
		if _, err := s.RunCycle(ctx); err != nil {
			b.Fatal(err)
		}
		requests += len(sim.Desk.Requests()) - reqs
		posts += len(p.list()) - before
	}
	b.ReportMetric(float64(requests)/float64(b.N)*60, "desk-req/h")
	b.ReportMetric(float64(posts)/float64(b.N)*60, "slack-posts/h")
}
