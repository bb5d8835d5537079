package slackchat_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/follow"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// lateReplier forwards thread replies to the router, which newE2E builds
// after the transport's options.
type lateReplier struct{ r atomic.Pointer[bot.Router] }

func (l *lateReplier) ThreadReply(ctx context.Context, c chat.Caller, id int64, text string) chat.Reply {
	return l.r.Load().ThreadReply(ctx, c, id, text)
}

// slackAlerts posts the scheduler's alerts through the transport, as
// cmd/deskbot's chatNotifier does.
type slackAlerts struct{ s *slackchat.Slack }

func (n slackAlerts) Alert(ctx context.Context, a firing.Alert) error {
	return n.s.Alert(ctx, chat.AlertMessage{Channel: a.Channel, Text: a.Text, Mention: a.Mention, Ticket: a.Ticket, Rule: a.Rule, Key: a.Key})
}

type threadEnv struct {
	*e2e
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	st     *store.Store
	sched  *scheduler.Scheduler
	ticket int64
	carol  int64 // the requester
	alice  int64 // an agent
}

const threadRules = `version: 1
rules:
  - name: urgent
    query: "priority:4"
    actions: [{alert: {channel: "#it-oncall", text: "Urgent ticket"}}]
`

func newThreadEnv(t *testing.T) *threadEnv {
	t.Helper()
	clk := clockwork.NewFakeClockAt(pageT0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	t.Cleanup(sim.Close)
	alice := sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	carol := sim.Desk.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	sim.Desk.AddRequester(sdsim.Requester{FirstName: "Dave", PrimaryEmail: "dave@example.com"})
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer on fire", Priority: 4, Status: sdclient.StatusOpen, RequesterID: carol.ID})
	client, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()))
	if err != nil {
		t.Fatal(err)
	}
	st := testkit.Store(t, filepath.Join(t.TempDir(), "state.db"), store.WithClock(clk.Now))
	set := testkit.Rules(t, threadRules)
	fake := slackfake.New(slackfake.WithUsers(append(slackUsers(), slackfake.User{ID: "UDAVE", Name: "dave", Email: "dave@example.com"})...),
		slackfake.WithChannels(slackfake.Channel{ID: oncallID, Name: "it-oncall"}))
	t.Cleanup(fake.Close)
	fwd := &lateReplier{}
	marks, err := st.Marks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h := newE2EWith(t, fake, bot.NewDeskAdapter(client), []bot.Option{bot.WithClock(clk.Now), bot.WithMarks(marks)},
		slackchat.WithAPIURL(fake.APIURL()), slackchat.WithClock(clk.Now), slackchat.WithThreads(st, fwd))
	fwd.r.Store(h.router)
	sched, err := scheduler.New(slog.New(h.logs), firing.ClientDesk(client), set, st, slackAlerts{h.slack},
		scheduler.WithClock(clk), scheduler.WithSingleton(false),
		scheduler.WithSubscriber(follow.NewThreads(firing.ClientDesk(client), st, h.slack, st)))
	if err != nil {
		t.Fatal(err)
	}
	return &threadEnv{e2e: h, clk: clk, sim: sim, client: client, st: st, sched: sched, ticket: tk.ID, carol: carol.ID, alice: alice.ID}
}

// poll runs the rules (and so the change feed and the threads) a minute on.
func (e *threadEnv) poll() {
	e.t.Helper()
	e.clk.Advance(time.Minute)
	if _, err := e.sched.RunOnce(e.ctx); err != nil {
		e.t.Fatalf("poll: %v", err)
	}
}

// alerted polls and returns the alert the rules posted in the on-call
// channel (the thread's parent).
func (e *threadEnv) alerted() slackfake.Message {
	e.t.Helper()
	e.poll()
	alert, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postMessage" && m.Channel == oncallID && m.ThreadTS == ""
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return alert
}

// inThread is what the bot posted in the thread ts (not ephemeral).
func (e *threadEnv) inThread(ts string) []string {
	var out []string
	for _, m := range e.fake.Messages() {
		if m.Method == "chat.postMessage" && m.ThreadTS == ts {
			out = append(out, m.Text)
		}
	}
	return out
}

// say posts text as user in the thread ts and waits for what the bot tells
// the author (an ephemeral message in the thread).
func (e *threadEnv) say(user, ts, text string) (slackfake.UserMessage, string) {
	e.t.Helper()
	seen := map[string]bool{}
	for _, x := range e.fake.Messages() {
		seen[x.TS] = true
	}
	m, env, err := e.fake.PostUserMessage(e.ctx, slackfake.UserMessage{UserID: user, ChannelID: oncallID, ThreadTS: ts, Text: text})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := env.WaitAck(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.fake.WaitMessage(e.ctx, func(x slackfake.Message) bool {
		return x.Ephemeral && x.User == user && x.ThreadTS == ts && !seen[x.TS]
	})
	if err != nil {
		e.t.Fatalf("no answer to %s's thread reply %q: %v", user, text, err)
	}
	return m, got.Text
}

// lastConv is the ticket's newest conversation on the desk.
func (e *threadEnv) lastConv() sdsim.Conversation {
	cs := e.sim.Desk.Conversations(e.ticket)
	if len(cs) == 0 {
		e.t.Fatal("no conversations on the desk")
	}
	return cs[len(cs)-1]
}

// An alerted ticket stays linked to its alert's thread, both ways: desk
// replies and status changes appear in the thread once; replies in the
// thread become requester notes, agent notes or agent replies, never
// echoed back; strangers, bots and edits are not copied.
func TestLiveThreadEndToEnd(t *testing.T) {
	e := newThreadEnv(t)
	ctx := e.ctx
	alert := e.alerted()
	l, ok, err := e.st.ThreadOf(ctx, e.ticket)
	if err != nil || !ok || l.Channel != oncallID || l.ThreadTS != alert.TS {
		t.Fatalf("link of the alerted ticket = %+v, %v, %v; want %s/%s", l, ok, err, oncallID, alert.TS)
	}
	ts := alert.TS

	// Desk -> thread.
	e.clk.Advance(time.Second)
	if _, _, err := e.client.Conversations.Reply(ctx, e.ticket, &sdclient.ReplyRequest{Body: "<p>We are replacing the fuser.</p>"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.client.Conversations.Note(ctx, e.ticket, &sdclient.NoteRequest{Body: "internal only", Private: true}); err != nil {
		t.Fatal(err)
	}
	e.poll()
	e.poll() // again: nothing twice
	want := []string{"Reply on the desk:\nWe are replacing the fuser."}
	if got := e.inThread(ts); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("thread after a desk reply = %q; want %q", got, want)
	}

	// Thread -> desk: the requester.
	carolMsg, told := e.say("UCAROL", ts, "It is smoking again")
	if told != fmt.Sprintf("Copied to ticket #%d.", e.ticket) {
		t.Errorf("Carol was told %q", told)
	}
	if c := e.lastConv(); !c.Incoming || c.Private || c.UserID != e.carol || !strings.Contains(c.Body, "It is smoking again") {
		t.Errorf("Carol's reply on the desk = %+v; want a public incoming note by her", c)
	}
	// An agent: a private note, or a public reply when marked.
	if _, told := e.say("UALICE", ts, "fuser is dead, ordered"); !strings.Contains(told, "private note") {
		t.Errorf("Alice was told %q", told)
	}
	if c := e.lastConv(); !c.Private || c.UserID != e.alice || !strings.Contains(c.Body, "fuser is dead, ordered") {
		t.Errorf("Alice's note on the desk = %+v", c)
	}
	if _, told := e.say("UALICE", ts, "reply: A technician comes at 3pm"); !strings.Contains(told, "public reply") {
		t.Errorf("Alice was told %q", told)
	}
	if c := e.lastConv(); c.Private || c.Source != sdsim.ConversationSourceReply || c.UserID != e.alice ||
		!strings.Contains(c.Body, "A technician comes at 3pm") || strings.Contains(c.Body, "reply:") {
		t.Errorf("Alice's reply on the desk = %+v", c)
	}
	// Someone else: not copied, and told so.
	n := len(e.sim.Desk.Conversations(e.ticket))
	if _, told := e.say("UDAVE", ts, "me too!"); !strings.Contains(told, "not copied") {
		t.Errorf("Dave was told %q", told)
	}
	if len(e.sim.Desk.Conversations(e.ticket)) != n {
		t.Error("a stranger's thread reply reached the desk")
	}
	// No echo: what came from the thread is not posted back to it.
	e.poll()
	if got := e.inThread(ts); len(got) != 1 {
		t.Fatalf("thread after its replies were copied = %q; want only the desk's reply", got)
	}

	// The bot's own posts come back as message events: ignored.
	posted, _ := e.fake.WaitMessage(ctx, func(m slackfake.Message) bool { return m.ThreadTS == ts && !m.Ephemeral })
	if env, err := e.fake.EchoBotMessage(ctx, posted); err != nil {
		t.Fatal(err)
	} else if _, err := env.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
	// Edits and deletions: the thread says once that they are not copied.
	for range 2 {
		env, err := e.fake.EditUserMessage(ctx, carolMsg, "It is smoking again (a lot)")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	notice, err := e.fake.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.ThreadTS == ts && strings.Contains(m.Text, "not copied to the desk")
	})
	if err != nil {
		e.logs.mu.Lock()
		t.Fatalf("no edits notice: %v; logs:\n%s", err, strings.Join(e.logs.msgs, "\n"))
	}
	if env, err := e.fake.DeleteUserMessage(ctx, carolMsg); err != nil {
		t.Fatal(err)
	} else if _, err := env.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
	// A last reply: the events before it were read (and their work
	// started) before it was.
	e.say("UCAROL", ts, "thanks")
	notices := 0
	for _, m := range e.inThread(ts) {
		if m == notice.Text {
			notices++
		}
	}
	if notices != 1 || !strings.Contains(notice.Text, fmt.Sprintf("ticket #%d", e.ticket)) {
		t.Errorf("edits notice posted %d times (%q); want once", notices, notice.Text)
	}
	if got := len(e.sim.Desk.Conversations(e.ticket)); got != n+1 {
		t.Errorf("the desk has %d conversations; want %d (the bot's echo, edits and deletions copy nothing)", got, n+1)
	}

	// A status change on the desk.
	resolved := sdclient.StatusResolved
	if _, _, err := e.client.Tickets.Update(ctx, e.ticket, &sdclient.TicketUpdate{Status: &resolved}); err != nil {
		t.Fatal(err)
	}
	e.poll()
	got := e.inThread(ts)
	if last := got[len(got)-1]; last != "Status on the desk: Open → Resolved" {
		t.Errorf("thread after resolving = %q", got)
	}
}

// deskReplies has the desk reply "Unjammed." on ticket id between polls
// (twice after it: nothing is posted twice), and returns what the thread
// ts then holds.
func (e *threadEnv) deskReplies(id int64, ts string) []string {
	e.t.Helper()
	e.poll()
	e.clk.Advance(time.Second)
	if _, _, err := e.client.Conversations.Reply(e.ctx, id, &sdclient.ReplyRequest{Body: "<p>Unjammed.</p>"}); err != nil {
		e.t.Fatal(err)
	}
	e.poll()
	e.poll()
	return e.inThread(ts)
}

// A ticket made from a message follows the message's thread as an alerted
// one does: the desk's public reply on it appears there, once.
func TestTicketFromMessageFollowsItsThread(t *testing.T) {
	e := newThreadEnv(t)
	ctx := e.ctx
	ts, err := e.fake.UserMessage("UCAROL", oncallID, "Scanner jammed\nfloor 2", "")
	if err != nil {
		t.Fatal(err)
	}
	e.react("UALICE", oncallID, ts, "ticket")
	answer := e.waitPosted("answer in the thread", func(m slackfake.Message) bool { return m.ThreadTS == ts && !m.Ephemeral })
	var id int64
	if _, err := fmt.Sscanf(answer.Text, "Created ticket #%d", &id); err != nil {
		t.Fatalf("answer %q: %v", answer.Text, err)
	}
	l, ok, err := e.st.ThreadOf(ctx, id)
	if err != nil || !ok || l.Channel != oncallID || l.ThreadTS != ts {
		t.Fatalf("link of the ticket made from the message = %+v, %v, %v; want %s/%s", l, ok, err, oncallID, ts)
	}
	n := 0
	for _, text := range e.deskReplies(id, ts) {
		if text == "Reply on the desk:\nUnjammed." {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the desk's reply appeared %d times in the message's thread %q; want once", n, e.inThread(ts))
	}
}

// A ticket opened with /ticket new (whose answer only its author sees) is
// followed in a thread of the author's direct messages with the bot: the
// desk's reply appears there once, and the author's reply there goes to
// the ticket.
func TestNewTicketFollowedInDM(t *testing.T) {
	e := newThreadEnv(t)
	ctx := e.ctx
	r := e.slash("UCAROL", "/ticket", "new Scanner jammed")
	var id int64
	if _, err := fmt.Sscanf(r.Text, "Created ticket #%d", &id); err != nil {
		t.Fatalf("answer %q: %v", r.Text, err)
	}
	head := e.waitPosted("the thread that follows the ticket", func(m slackfake.Message) bool {
		return m.Channel == "DUCAROL" && strings.HasPrefix(m.Text, fmt.Sprintf("Ticket #%d: Scanner jammed", id))
	})
	if l, ok, err := e.st.ThreadOf(ctx, id); err != nil || !ok || l.Channel != "DUCAROL" || l.ThreadTS != head.TS {
		t.Fatalf("link of the new ticket = %+v, %v, %v; want DUCAROL/%s", l, ok, err, head.TS)
	}
	if got := e.deskReplies(id, head.TS); len(got) != 1 || got[0] != "Reply on the desk:\nUnjammed." {
		t.Fatalf("the DM thread holds %q; want the desk's reply once", got)
	}
	_, env, err := e.fake.PostUserMessage(ctx, slackfake.UserMessage{UserID: "UCAROL", ChannelID: "DUCAROL", ThreadTS: head.TS, Text: "Works now, thanks"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
	told := e.waitPosted("what Carol's reply became", func(m slackfake.Message) bool {
		return m.Ephemeral && m.User == "UCAROL" && m.ThreadTS == head.TS
	})
	if told.Text != fmt.Sprintf("Copied to ticket #%d.", id) {
		t.Errorf("Carol was told %q", told.Text)
	}
	cs := e.sim.Desk.Conversations(id)
	if len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "Works now, thanks") {
		t.Errorf("the ticket's conversations %+v lack Carol's reply", cs)
	}
}

// Live threads look only at people's replies in threads (and their edits
// and deletions): every other channel message is dropped before it costs a
// worker or a store write.
func TestInAThread(t *testing.T) {
	msg := func(user, bot, ts, thread string) *slackevents.MessageEvent {
		return &slackevents.MessageEvent{User: user, BotID: bot, TimeStamp: ts, ThreadTimeStamp: thread}
	}
	in := &slack.Msg{Timestamp: "2.0", ThreadTimestamp: "1.0"}
	parent := &slack.Msg{Timestamp: "1.0", ThreadTimestamp: "1.0"}
	for _, tc := range []struct {
		name string
		ev   *slackevents.MessageEvent
		want bool
	}{
		{"a reply in a thread", msg("UCAROL", "", "2.0", "1.0"), true},
		{"a message in the channel", msg("UCAROL", "", "2.0", ""), false},
		{"a thread's parent", msg("UCAROL", "", "1.0", "1.0"), false},
		{"a bot's reply", msg("", "B1", "2.0", "1.0"), false},
		{"a broadcast reply", &slackevents.MessageEvent{SubType: "thread_broadcast", User: "UCAROL", TimeStamp: "2.0", ThreadTimeStamp: "1.0"}, true},
		{"a reply edited", &slackevents.MessageEvent{SubType: "message_changed", Message: in}, true},
		{"a parent edited", &slackevents.MessageEvent{SubType: "message_changed", Message: parent}, false},
		{"a reply deleted", &slackevents.MessageEvent{SubType: "message_deleted", PreviousMessage: in}, true},
		{"a channel join", &slackevents.MessageEvent{SubType: "channel_join", User: "UCAROL", TimeStamp: "2.0", ThreadTimeStamp: "1.0"}, false},
	} {
		if got := slackchat.InAThread(tc.ev); got != tc.want {
			t.Errorf("%s: inAThread = %v, want %v", tc.name, got, tc.want)
		}
	}
}
