package slackchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// pageRules is the rules file of the on-call tests: the it-primary rota
// (every rotation at 09:00 Zurich time from 2026-03-02) of members, the
// it-urgent policy of levels (one flow mapping each), and the rule
// page-urgent paging it for every urgent unassigned ticket.
func pageRules(rotation, members string, levels ...string) string {
	return `version: 1
channels: {oncall: "#it-oncall"}
oncall:
  schedules:
    - name: it-primary
      time_zone: Europe/Zurich
      rotation: ` + rotation + `
      handoff: "09:00"
      start: 2026-03-02
      members: [` + members + `]
  policies:
    - name: it-urgent
      levels:
        - ` + strings.Join(levels, "\n        - ") + `
rules:
  - name: page-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - page: {policy: it-urgent, text: "Urgent #{{ ticket.id }} unassigned: {{ ticket.subject }}"}
`
}

// pageRulesYAML pages alice or carol (the rota), then bob, then the user
// group S0GROUP.
var pageRulesYAML = pageRules("1d", "alice@example.com, carol@example.com",
	"{schedule: it-primary, after: 10m}", "{user: bob@example.com, after: 10m}", "{group: S0GROUP, after: 15m}")

// pageT0 is during alice's shift (09:00 CET 2026-03-02 to 09:00 the next day).
var pageT0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// forwardPager lets the escalator page through a transport built after it
// (the router needs the escalator, the transport needs the router).
type forwardPager struct {
	p atomic.Pointer[slackchat.Slack]
}

func (f *forwardPager) Page(ctx context.Context, r oncall.PageRequest) error {
	return f.p.Load().Page(ctx, r)
}

func (f *forwardPager) PageGroup(ctx context.Context, rs []oncall.PageRequest) []error {
	return f.p.Load().PageGroup(ctx, rs)
}

func (f *forwardPager) PageStopped(ctx context.Context, p oncall.Page) error {
	return f.p.Load().PageStopped(ctx, p)
}

// pageEnv is the whole on-call path: the desk simulator behind the real
// client, a SQLite store, the rules, the scheduler, the escalator and the
// Slack transport on slackfake, all on one injected clock.
type pageEnv struct {
	*e2e
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	st     *store.Store
	esc    *oncall.Escalator
	sched  *scheduler.Scheduler
	ticket int64
	alice  int64 // agent ids
}

// postAlert posts rule's alert of firing key on ticket id to #it-oncall, as
// the scheduler does, and returns the message once Slack has it.
func (e *pageEnv) postAlert(id int64, rule, text, key string) slackfake.Message {
	e.t.Helper()
	tk, err := e.desk.Ticket(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.slack.Alert(e.ctx, chat.AlertMessage{Channel: "#it-oncall", Text: text, Ticket: tk, Rule: rule, Key: key}); err != nil {
		e.t.Fatal(err)
	}
	m, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), slackchat.MarkerBlockID(key))
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func newPageEnv(t *testing.T) *pageEnv {
	t.Helper()
	return newPageEnvRules(t, pageRulesYAML)
}

// newPageEnvRules is newPageEnv over another rules file.
func newPageEnvRules(t *testing.T, rulesYAML string) *pageEnv {
	t.Helper()
	return newPageEnvWith(t, rulesYAML, nil, nil)
}

// newPageEnvWith is newPageEnvRules with more options for the desk
// simulator and the client.
func newPageEnvWith(t *testing.T, rulesYAML string, simOpts []sdsim.Option, clientOpts []sdclient.Option) *pageEnv {
	t.Helper()
	clk := clockwork.NewFakeClockAt(pageT0)
	sim := sdsim.NewServer(append([]sdsim.Option{sdsim.WithClock(clk.Now)}, simOpts...)...)
	t.Cleanup(sim.Close)
	alice := sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Bob", LastName: "Builder", Email: "bob@example.com"})
	requester := sim.Desk.AddRequester(sdsim.Requester{FirstName: "Dora", PrimaryEmail: "dora@example.com"})
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Core switch down", Priority: 4, RequesterID: requester.ID})
	client, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, append([]sdclient.Option{sdclient.WithHTTPClient(sim.Client())}, clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	st := testkit.Store(t, filepath.Join(t.TempDir(), "state.db"))
	set := testkit.Rules(t, rulesYAML)
	fp := &forwardPager{}
	esc, err := oncall.NewEscalator(set.OnCall(), st, fp, oncall.ClientDesk(client), oncall.WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	h := newE2E(t, bot.NewDeskAdapter(client), []bot.Option{bot.WithClock(clk.Now), bot.WithOnCall(esc)}, slackchat.WithClock(clk.Now))
	fp.p.Store(h.slack)
	sched, err := scheduler.New(slog.New(h.logs), firing.ClientDesk(client), set, st, nil,
		scheduler.WithClock(clk), scheduler.WithEscalator(esc, 0), scheduler.WithSingleton(false))
	if err != nil {
		t.Fatal(err)
	}
	return &pageEnv{e2e: h, clk: clk, sim: sim, client: client, st: st, esc: esc, sched: sched, ticket: tk.ID, alice: alice.ID}
}

// poll runs the rules once.
func (e *pageEnv) poll() {
	e.t.Helper()
	res, err := e.sched.RunOnce(e.ctx)
	if err != nil || len(res) != 1 || !res[0].Complete {
		e.t.Fatalf("poll: %+v %v", res, err)
	}
}

// tick advances the clock and takes the due escalation steps.
func (e *pageEnv) tick(d time.Duration) {
	e.t.Helper()
	e.clk.Advance(d)
	if _, err := e.sched.TickPages(e.ctx); err != nil {
		e.t.Fatalf("tick: %v", err)
	}
}

// dms returns the direct messages sent to a user.
func (e *pageEnv) dms(user string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range e.fake.Messages() {
		if m.Method == "chat.postMessage" && m.Channel == "D"+user {
			out = append(out, m)
		}
	}
	return out
}

// cards returns every post and update of page cards in the on-call channel.
func (e *pageEnv) cards() []slackfake.Message {
	var out []slackfake.Message
	for _, m := range e.fake.Messages() {
		if m.Channel == oncallID && strings.Contains(string(m.Blocks), slackchat.BlockPagePrefix) {
			out = append(out, m)
		}
	}
	return out
}

func (e *pageEnv) lastCard() slackfake.Message {
	e.t.Helper()
	cs := e.cards()
	if len(cs) == 0 {
		e.t.Fatal("no page card in the on-call channel")
	}
	return cs[len(cs)-1]
}

// notes returns the private notes of the ticket.
func (e *pageEnv) notes() []string {
	var out []string
	for _, c := range e.sim.Desk.Conversations(e.ticket) {
		if c.Private {
			out = append(out, c.Body)
		}
	}
	return out
}

// waitPage polls the stored page until cond holds.
func (e *pageEnv) waitPage(cond func(oncall.Page) bool) {
	e.t.Helper()
	for {
		p, ok, err := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1))
		if err == nil && ok && cond(p) {
			return
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("page never reached the expected state: %+v %v", p, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// clickPage clicks a page button and waits for the card's update.
func (e *pageEnv) clickPage(user, action string) slackfake.Message {
	e.t.Helper()
	return e.click(user, e.lastCard(), action)
}

// unescaped is blocks JSON with <, > and & as Slack shows them.
func unescaped(b json.RawMessage) string {
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}

func has(m slackfake.Message, subs ...string) error {
	all := m.Text + "\n" + unescaped(m.Blocks)
	for _, s := range subs {
		if !strings.Contains(all, s) {
			return fmt.Errorf("message lacks %q:\n%s", s, all)
		}
	}
	return nil
}

func TestOnCallPageEscalatesUntilAcknowledged(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	// Level 1: alice is on call; she gets a DM and the card mentions her.
	if dm := e.dms("UALICE"); len(dm) != 1 || has(dm[0], "You are on call: Urgent #", "level 1 of it-urgent", "/oncall ack") != nil {
		t.Fatalf("alice's DMs: %+v", dm)
	}
	card := e.lastCard()
	if card.Method != "chat.postMessage" {
		t.Fatalf("first card %+v", card)
	}
	if err := has(card, "<@UALICE> you are paged (level 1 of it-urgent)", "Core switch down",
		chat.ActionPageAck, chat.ActionPageTake, chat.ActionPageEscalate, "12:00 UTC · paged <@UALICE> (level 1)"); err != nil {
		t.Fatal(err)
	}
	// Polls in the same episode never page again.
	e.clk.Advance(time.Minute)
	e.poll()
	if n := len(e.dms("UALICE")); n != 1 {
		t.Fatalf("alice paged %d times", n)
	}

	// Nobody acknowledges: nothing before the level's 10 minutes ...
	e.tick(8 * time.Minute)
	if n := len(e.dms("UBOB")); n != 0 {
		t.Fatalf("bob paged %d times before the wait ran out", n)
	}
	// ... then level 2, on a restarted process: a new escalator over the
	// same store and a transport that never saw the card (it finds it in
	// the channel's history and updates it in place).
	e.slack.ForgetCards()
	fp := &forwardPager{}
	fp.p.Store(e.slack)
	set := testkit.Rules(t, pageRulesYAML)
	esc2, err := oncall.NewEscalator(set.OnCall(), e.st, fp, oncall.ClientDesk(e.client))
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute) // 12:10: the level's 10 minutes are up
	if st, err := esc2.Tick(e.ctx, e.clk.Now()); err != nil || st.Paged != 1 {
		t.Fatalf("tick after restart: %+v %v", st, err)
	}
	if dm := e.dms("UBOB"); len(dm) != 1 || has(dm[0], "level 2 of it-urgent") != nil {
		t.Fatalf("bob's DMs: %+v", dm)
	}
	up := e.lastCard()
	if !up.Updated || up.TS != card.TS {
		t.Fatalf("level 2 did not update the card in place: %+v (first card %s)", up, card.TS)
	}
	if err := has(up, "<@UBOB> you are paged (level 2 of it-urgent)", "12:10 UTC · no acknowledgement after 10m: paged <@UBOB> (level 2)"); err != nil {
		t.Fatal(err)
	}
	if n := len(e.cards()); n != 2 {
		t.Fatalf("%d card posts/updates, want the post and one update", n)
	}

	// Bob acknowledges on the card: the escalation stops, the card says so
	// and loses its buttons, the ticket has the note.
	e.clk.Advance(3 * time.Minute)
	acked := e.clickPage("UBOB", chat.ActionPageAck)
	if err := has(acked, "<@UBOB> acknowledged at 12:13 UTC", "12:13 UTC · acknowledged by <@UBOB>"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(acked.Blocks), chat.ActionPageEscalate) {
		t.Fatal("an acknowledged page card still has its buttons")
	}
	notes := e.notes()
	if len(notes) != 1 || !strings.Contains(notes[0], "On-call page acknowledged by Bob Builder (bob@example.com) at 2026-03-02 12:13:00 UTC") {
		t.Fatalf("ticket notes %q", notes)
	}
	for range 6 {
		e.tick(10 * time.Minute)
	}
	if a, b := len(e.dms("UALICE")), len(e.dms("UBOB")); a != 1 || b != 1 {
		t.Fatalf("paged again after the ack: alice %d, bob %d", a, b)
	}
	if p, _, _ := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1)); p.AckedBy != "bob@example.com" || p.Level != 1 {
		t.Fatalf("stored page %+v", p)
	}
	// A second click says who was first.
	r := e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if !strings.Contains(r.Text, fmt.Sprintf("no page of ticket #%d is waiting for an acknowledgement: Bob Builder (bob@example.com) already acknowledged the page at 2026-03-02 12:13 UTC.", e.ticket)) {
		t.Fatalf("/oncall ack after the ack: %q", r.Text)
	}
}

func TestOnCallTakeIt(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	e.clk.Advance(2 * time.Minute)
	up := e.clickPage("UALICE", chat.ActionPageTake)
	if err := has(up, "<@UALICE> took the ticket at 12:02 UTC", "Alice Agent"); err != nil {
		t.Fatal(err)
	}
	tk, _ := e.sim.Desk.Ticket(e.ticket)
	if tk.ResponderID != e.alice {
		t.Fatalf("responder %d, want alice %d", tk.ResponderID, e.alice)
	}
	if n := e.notes(); len(n) != 1 || !strings.Contains(n[0], "On-call page taken (assigned to them) by Alice Agent (alice@example.com) at 2026-03-02 12:02:00 UTC") {
		t.Fatalf("notes %q", n)
	}
	e.tick(30 * time.Minute)
	if n := len(e.dms("UBOB")); n != 0 {
		t.Fatalf("bob paged after alice took it")
	}
}

func TestOnCallEscalateNow(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	e.clk.Advance(time.Minute)
	up := e.clickPage("UALICE", chat.ActionPageEscalate)
	if _, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool { return m.Channel == "DUBOB" }); err != nil {
		t.Fatalf("Escalate now did not page level 2 at once: %v", err)
	}
	if err := has(up, "<@UBOB> you are paged (level 2 of it-urgent)", "12:01 UTC · <@UALICE> escalated now", "12:01 UTC · paged <@UBOB> (level 2)"); err != nil {
		t.Fatal(err)
	}
	// The click's work ends when the step is confirmed in the store.
	e.waitPage(func(p oncall.Page) bool { return !p.Sending && p.Level == 1 })
	// Level 3 is a group: mentioned on the card, no DM.
	e.tick(10 * time.Minute)
	if err := has(e.lastCard(), "<!subteam^S0GROUP> you are paged (level 3 of it-urgent)"); err != nil {
		t.Fatal(err)
	}
}

func TestOnCallCommands(t *testing.T) {
	e := newPageEnv(t)
	r := e.slash("UCAROL", "/oncall", "")
	// Members given as e-mails of Slack users are shown as mentions.
	want := "it-primary: <@UALICE> until Tue 2026-03-03 09:00 CET, then <@UCAROL> until Wed 2026-03-04 09:00 CET"
	if r.Text != want {
		t.Fatalf("/oncall = %q, want %q", r.Text, want)
	}
	r = e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if !strings.Contains(r.Text, "is waiting for an acknowledgement") {
		t.Fatalf("ack before any page: %q", r.Text)
	}
	r = e.slash("UALICE", "/oncall", "ack")
	if !strings.Contains(r.Text, "missing ticket number N; usage: /oncall ack N") {
		t.Fatalf("ack without N: %q", r.Text)
	}
	r = e.slash("UALICE", "/oncall", "later")
	if !strings.Contains(r.Text, "unknown command /oncall later; usage: /oncall | /oncall ack N") {
		t.Fatalf("unknown sub-command: %q", r.Text)
	}
	e.poll()
	card := e.lastCard()
	e.clk.Advance(4 * time.Minute)
	r = e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if !strings.Contains(r.Text, fmt.Sprintf("Acknowledged the page of ticket #%d (it-urgent)", e.ticket)) {
		t.Fatalf("/oncall ack: %q", r.Text)
	}
	up, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.update" && m.TS == card.TS && strings.Contains(string(m.Blocks), "acknowledged at 12:04 UTC")
	})
	if err != nil {
		t.Fatalf("card not updated after /oncall ack: %v", err)
	}
	if err := has(up, "<@UALICE> acknowledged at 12:04 UTC"); err != nil {
		t.Fatal(err)
	}
	if n := e.notes(); len(n) != 1 || !strings.Contains(n[0], "acknowledged by Alice Agent (alice@example.com)") {
		t.Fatalf("notes %q", n)
	}
	r = e.slash("UCAROL", "/ticket", "help")
	if !strings.Contains(r.Text, "/oncall — who is on call now and next") || !strings.Contains(r.Text, "/oncall ack N — acknowledge") {
		t.Fatalf("help lacks /oncall: %q", r.Text)
	}
}

func TestOnCallAlertAckStopsPage(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	// The rule's alert of the same firing (episode 1) carries its key.
	key := fmt.Sprintf("deskbot:f=page-urgent/%d/1.1/1", e.ticket)
	m := e.postAlert(e.ticket, "page-urgent", "Urgent", key)
	pageCard := e.lastCard()
	e.click("UBOB", m, chat.ActionAcknowledge)
	p, _, _ := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1))
	if p.AckedBy != "bob@example.com" {
		t.Fatalf("page not acknowledged by the alert's button: %+v", p)
	}
	if _, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.TS == pageCard.TS && m.Updated && strings.Contains(unescaped(m.Blocks), "<@UBOB> acknowledged")
	}); err != nil {
		t.Fatalf("page card not refreshed: %v", err)
	}
	if got := e.acks.list(); len(got) != 1 || got[0] != key+" by bob@example.com" {
		t.Fatalf("alert ack not recorded: %q", got)
	}
	if n := e.notes(); len(n) != 1 {
		t.Fatalf("want one note (the page's), got %q", n)
	}
}

func TestOnCallExhaustedPageCardSaysSo(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	// Nobody acknowledges any level: alice (10m), bob (10m), the group (15m).
	for range 8 {
		e.tick(5 * time.Minute)
	}
	e.waitPage(func(p oncall.Page) bool { return p.Exhausted })
	card := e.lastCard()
	if !card.Updated {
		t.Fatalf("the card was not redrawn when paging gave up: %+v", card)
	}
	if err := has(card, "Nobody acknowledged: every level of it-urgent was paged"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(card.Blocks), chat.ActionPageEscalate) {
		t.Fatal("an exhausted page card still offers Escalate now")
	}
}

// The people of these tests besides alice and bob (agents, on the rota)
// and carol (on the rota, not an agent).
const (
	malloryID = "UMALLORY" // in the workspace, neither an agent nor on the rota
	erinID    = "UERIN"    // an agent of the desk, not on the rota
)

// addOutsiders adds mallory and erin to the workspace, erin also to the desk.
func (e *pageEnv) addOutsiders() {
	e.fake.AddUser(slackfake.User{ID: malloryID, Name: "mallory", Email: "mallory@example.com"})
	e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
	e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Erin", LastName: "Agent", Email: "erin@example.com"})
}

// clickRefused clicks a button of the last page card and returns the
// ephemeral answer to user; it fails when the click changed the card.
func (e *pageEnv) clickRefused(user, action string) slackfake.Message {
	e.t.Helper()
	card := e.lastCard()
	var value string
	for _, b := range chat.PageButtons(e.page()) {
		if b.ActionID == action {
			value = b.Value
		}
	}
	before := e.press(user, card, action, value)
	var answer, changed *slackfake.Message
	err := e.fake.Wait(e.ctx, func() bool {
		// A click that changes the card updates it before answering.
		for _, m := range e.fake.Messages()[before:] {
			if m.TS == card.TS && m.Updated {
				changed = &m
				return true
			}
			if m.Method == "chat.postEphemeral" && m.User == user {
				answer = &m
				return true
			}
		}
		return false
	})
	switch {
	case err != nil:
		e.t.Fatalf("no answer to %s by %s: %v", action, user, err)
	case changed != nil:
		e.t.Fatalf("%s by %s changed the card: %s", action, user, unescaped(changed.Blocks))
	}
	return *answer
}

// page reads the page of the ticket's first episode.
func (e *pageEnv) page() oncall.Page {
	e.t.Helper()
	p, ok, err := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1))
	if err != nil || !ok {
		e.t.Fatalf("page: %v %v", ok, err)
	}
	return p
}

// TestOnCallPageOutsiderRefused: someone in the workspace who is neither a
// desk agent nor on the policy's rota cannot acknowledge, escalate or
// /oncall ack a page: each gets a clear refusal, the card stays as it is
// and the page keeps escalating at its next step.
func TestOnCallPageOutsiderRefused(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.poll()
	card := e.lastCard()
	before := e.page()
	e.clk.Advance(2 * time.Minute)

	for _, tc := range []struct{ action, want string }{
		{chat.ActionPageAck, "only desk agents and the people on it-urgent's rota can acknowledge its pages; mallory@example.com is neither"},
		{chat.ActionPageEscalate, "only desk agents and the people on it-urgent's rota can escalate its pages; mallory@example.com is neither"},
		{chat.ActionPageTake, "only desk agents can use"},
	} {
		if m := e.clickRefused(malloryID, tc.action); !strings.Contains(m.Text, tc.want) {
			t.Errorf("%s by mallory answered %q, want %q", tc.action, m.Text, tc.want)
		}
	}
	r := e.slash(malloryID, "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if r.Text != outsiderAckRefusal("mallory@example.com") {
		t.Fatalf("/oncall ack by mallory = %q, want %q", r.Text, outsiderAckRefusal("mallory@example.com"))
	}
	if p := e.page(); p.Version != before.Version || p.Stopped() || p.Step != 1 {
		t.Fatalf("mallory changed the page: %+v", p)
	}
	if n := e.notes(); len(n) != 0 {
		t.Fatalf("notes after refusals: %q", n)
	}
	if n := len(e.dms("UBOB")); n != 0 {
		t.Fatalf("bob paged %d times before level 1 ran out", n)
	}
	if got := e.lastCard(); got.TS != card.TS || got.Updated {
		t.Fatalf("the card changed: %+v", got)
	}

	// The page goes on: level 2 (bob) when level 1's 10 minutes are up.
	e.tick(8 * time.Minute)
	if dm := e.dms("UBOB"); len(dm) != 1 || has(dm[0], "level 2 of it-urgent") != nil {
		t.Fatalf("bob's DMs after 10 minutes: %+v", dm)
	}
	if err := has(e.lastCard(), "<@UBOB> you are paged (level 2 of it-urgent)", chat.ActionPageAck); err != nil {
		t.Fatal(err)
	}
}

// TestOnCallPageRotaMemberNotAgent: carol is on the rota but not a desk
// agent: she may escalate and acknowledge the page, but not take the
// ticket (that assigns it, which needs an agent).
func TestOnCallPageRotaMemberNotAgent(t *testing.T) {
	e := newPageEnv(t)
	e.poll()
	e.clk.Advance(time.Minute)
	if m := e.clickRefused("UCAROL", chat.ActionPageTake); !strings.Contains(m.Text, "only desk agents can use") {
		t.Fatalf("Take it by carol answered %q", m.Text)
	}
	up := e.clickPage("UCAROL", chat.ActionPageEscalate)
	if err := has(up, "12:01 UTC · <@UCAROL> escalated now", "<@UBOB> you are paged (level 2 of it-urgent)"); err != nil {
		t.Fatal(err)
	}
	// The click is over when carol has its answer (after the card's last
	// redraw).
	if _, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postEphemeral" && m.User == "UCAROL" && strings.Contains(m.Text, "Escalated the page")
	}); err != nil {
		t.Fatalf("no answer to Escalate now: %v", err)
	}
	e.clk.Advance(time.Minute)
	acked := e.clickPage("UCAROL", chat.ActionPageAck)
	if err := has(acked, "<@UCAROL> acknowledged at 12:02 UTC"); err != nil {
		t.Fatal(err)
	}
	if n := e.notes(); len(n) != 1 || !strings.Contains(n[0], "On-call page acknowledged by carol@example.com at 2026-03-02 12:02:00 UTC") {
		t.Fatalf("notes %q", n)
	}
	e.tick(30 * time.Minute)
	if err := has(e.lastCard(), "<@UCAROL> acknowledged at 12:02 UTC"); err != nil {
		t.Fatalf("the page went on after carol's acknowledgement: %v", err)
	}
}

// TestOnCallPageAgentOffRota: erin is a desk agent who is not on the
// rota: agents may acknowledge any page.
func TestOnCallPageAgentOffRota(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.poll()
	e.clk.Advance(3 * time.Minute)
	acked := e.clickPage(erinID, chat.ActionPageAck)
	if err := has(acked, "<@UERIN> acknowledged at 12:03 UTC"); err != nil {
		t.Fatal(err)
	}
	if p := e.page(); p.AckedBy != "erin@example.com" {
		t.Fatalf("stored page %+v", p)
	}
	e.tick(30 * time.Minute)
	if n := len(e.dms("UBOB")); n != 0 {
		t.Fatalf("bob paged %d times after erin's acknowledgement", n)
	}
}

// twoPolicyRules pages two policies for the same ticket: carol is on
// it-urgent's rota only.
const twoPolicyRules = `version: 1
channels: {oncall: "#it-oncall"}
oncall:
  schedules:
    - name: it-primary
      time_zone: Europe/Zurich
      rotation: 1d
      handoff: "09:00"
      start: 2026-03-02
      members: [alice@example.com, carol@example.com]
  policies:
    - name: it-urgent
      levels:
        - {schedule: it-primary, after: 10m}
    - name: net-urgent
      levels:
        - {user: bob@example.com, after: 10m}
rules:
  - name: page-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - page: {policy: it-urgent, text: "Urgent #{{ ticket.id }}"}
  - name: page-net
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - page: {policy: net-urgent, text: "Network #{{ ticket.id }}"}
`

// TestOnCallAckCommandOnlyPermittedPages: /oncall ack N acknowledges the
// pages the caller may acknowledge and says why it left the others.
func TestOnCallAckCommandOnlyPermittedPages(t *testing.T) {
	e := newPageEnvRules(t, twoPolicyRules)
	e.poll()
	r := e.slash("UCAROL", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	for _, want := range []string{
		fmt.Sprintf("Acknowledged the page of ticket #%d (it-urgent)", e.ticket),
		"Not acknowledged: only desk agents and the people on net-urgent's rota can acknowledge its pages; carol@example.com is neither.",
	} {
		if !strings.Contains(r.Text, want) {
			t.Fatalf("/oncall ack by carol = %q, want %q", r.Text, want)
		}
	}
	it := e.page()
	net, ok, err := e.esc.Page(e.ctx, oncall.PageKey("page-net", e.ticket, 1))
	if err != nil || !ok {
		t.Fatalf("net page: %v %v", ok, err)
	}
	if it.AckedBy != "carol@example.com" || net.Stopped() {
		t.Fatalf("it-urgent page %+v, net-urgent page %+v", it, net)
	}
	// bob is on net-urgent (and an agent): his ack takes the rest.
	r = e.slash("UBOB", "/oncall", fmt.Sprintf("ack %d", e.ticket))
	if !strings.Contains(r.Text, fmt.Sprintf("Acknowledged the page of ticket #%d (net-urgent)", e.ticket)) || strings.Contains(r.Text, "Not acknowledged") {
		t.Fatalf("/oncall ack by bob = %q", r.Text)
	}
}

// TestOnCallPageGroupMemberMayAck: grace is neither a desk agent nor on a
// schedule, but a member of the Slack user group of the policy's third
// level: she is one of the page's people and may acknowledge it. Mallory,
// in the workspace but not in the group, still may not.
func TestOnCallPageGroupMemberMayAck(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.fake.AddUser(slackfake.User{ID: "UGRACE", Name: "grace", Email: "grace@example.com"})
	e.fake.AddUserGroup(slackfake.UserGroup{ID: "S0GROUP", Handle: "netops", Name: "Network ops", Users: []string{"UGRACE"}})
	e.poll()
	e.clk.Advance(time.Minute)
	if m := e.clickRefused(malloryID, chat.ActionPageAck); !strings.Contains(m.Text, "mallory@example.com is neither") {
		t.Fatalf("Acknowledge by mallory answered %q", m.Text)
	}
	up := e.clickPage("UGRACE", chat.ActionPageAck)
	if err := has(up, "<@UGRACE> acknowledged"); err != nil {
		t.Fatal(err)
	}
	if p := e.page(); !p.Acked() || p.AckedBy != "grace@example.com" {
		t.Fatalf("page after grace's click: %+v", p)
	}
}

// outsiderAckRefusal is the answer to /oncall ack N by someone who is
// neither a desk agent nor on the rota of a page of ticket N, whatever
// the pages of N.
func outsiderAckRefusal(email string) string {
	return "only desk agents and the people on the rota of a ticket's page can use /oncall ack; " + email +
		" is neither. You can open a ticket with /ticket new subject"
}

// TestOnCallAckTellsOutsidersNothing: /oncall ack N by someone who is
// neither a desk agent nor one of the page's people (mallory, unknown to
// the desk; dora, the ticket's requester) gets the same refusal whether
// the ticket has no page, a page escalating, or a page acknowledged: it
// used to say which policy paged, and who acknowledged and when.
func TestOnCallAckTellsOutsidersNothing(t *testing.T) {
	e := newPageEnv(t)
	e.addOutsiders()
	e.fake.AddUser(slackfake.User{ID: "UDORA", Name: "dora", Email: "dora@example.com"})
	quiet := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mouse squeaks", Priority: 1})
	e.poll()
	e.clk.Advance(2 * time.Minute)
	states := []struct {
		name   string
		before func()
	}{
		{"escalating", func() {}},
		{"acknowledged", func() {
			if r := e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket)); !strings.Contains(r.Text, "Acknowledged the page") {
				t.Fatalf("/oncall ack by alice = %q", r.Text)
			}
		}},
	}
	for _, st := range states {
		st.before()
		for _, who := range []struct{ id, email string }{{malloryID, "mallory@example.com"}, {"UDORA", "dora@example.com"}} {
			for _, id := range []int64{e.ticket, quiet.ID} {
				r := e.slash(who.id, "/oncall", fmt.Sprintf("ack %d", id))
				if r.Text != outsiderAckRefusal(who.email) {
					t.Errorf("%s: /oncall ack %d by %s = %q, want %q", st.name, id, who.email, r.Text, outsiderAckRefusal(who.email))
				}
			}
		}
	}
	if p := e.page(); p.AckedBy != "alice@example.com" {
		t.Fatalf("page %+v", p)
	}
}

// TestOnCallPageAgentScope: a desk agent who is not on the page's rota may
// acknowledge or escalate it (the Acknowledge and Escalate now buttons,
// /oncall ack N) only when the ticket is within their access, by the rules
// of /ticket show; otherwise they get its refusal, which names neither
// the ticket's subject nor who acknowledged, and the page goes on. Being
// on the rota is enough, whatever one's access.
func TestOnCallPageAgentScope(t *testing.T) {
	tests := []struct {
		name   string
		agent  sdsim.Agent
		onRota bool
		reason string // "" when allowed
	}{
		{"agent of another workspace", sdsim.Agent{WorkspaceIDs: []int64{3},
			Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeEntire}}}, false, "it is outside your workspaces"},
		{"assigned_items agent", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}}, false, "it is not assigned to you"},
		{"member_groups agent, ticket of no group", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeMember}}}, false, "it is not assigned to you"},
		{"entire_helpdesk agent", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeEntire}}}, false, ""},
		{"assigned_items agent on the rota", sdsim.Agent{Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rulesYAML := pageRulesYAML
			if tt.onRota {
				rulesYAML = strings.Replace(rulesYAML, "members: [alice@example.com, carol@example.com]", "members: [alice@example.com, carol@example.com, erin@example.com]", 1)
			}
			e := newPageEnvRules(t, rulesYAML)
			e.sim.Desk.AddWorkspace(sdsim.Workspace{ID: 3, Name: "HR"})
			tt.agent.FirstName, tt.agent.Email = "Erin", "erin@example.com"
			e.sim.Desk.AddAgent(tt.agent)
			e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
			e.poll()
			e.clk.Advance(time.Minute)
			if tt.reason == "" {
				if err := has(e.clickPage(erinID, chat.ActionPageAck), "<@UERIN> acknowledged at 12:01 UTC"); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := fmt.Sprintf("you cannot act on ticket #%d: %s", e.ticket, tt.reason)
			for _, action := range []string{chat.ActionPageAck, chat.ActionPageEscalate} {
				if m := e.clickRefused(erinID, action); m.Text != want {
					t.Errorf("%s by erin answered %q, want %q", action, m.Text, want)
				}
			}
			if r := e.slash(erinID, "/oncall", fmt.Sprintf("ack %d", e.ticket)); r.Text != want {
				t.Errorf("/oncall ack by erin = %q, want %q", r.Text, want)
			}
			if p := e.page(); p.Stopped() || p.Level != 0 {
				t.Fatalf("erin changed the page: %+v", p)
			}
			if n := e.notes(); len(n) != 0 {
				t.Fatalf("notes after refusals: %q", n)
			}
			// Once alice acknowledged, erin is not told who did.
			e.slash("UALICE", "/oncall", fmt.Sprintf("ack %d", e.ticket))
			if r := e.slash(erinID, "/oncall", fmt.Sprintf("ack %d", e.ticket)); r.Text != want {
				t.Errorf("/oncall ack by erin after alice's = %q, want %q", r.Text, want)
			}
		})
	}
}

// dave is on call but has no Slack account (his e-mail is unknown to
// Slack): the page must not wait on retries that cannot succeed, nor be
// lost; the next level is paged at once and the card says why.
var unreachableRulesYAML = pageRules("1w", "dave@example.com",
	"{schedule: it-primary, after: 10m}", "{user: bob@example.com, after: 10m}")

func TestOnCallTargetWithoutSlackAccountEscalatesAtOnce(t *testing.T) {
	e := newPageEnvRules(t, unreachableRulesYAML)
	e.poll()
	// The first step could not reach dave: bob is paged in the same
	// breath, not after minutes of retries of a lookup that cannot succeed.
	e.waitPage(func(p oncall.Page) bool { return !p.Sending && p.Level == 1 })
	if dm := e.dms("UBOB"); len(dm) != 1 || has(dm[0], "level 2 of it-urgent") != nil {
		t.Fatalf("bob's DMs right after dave could not be paged: %+v", dm)
	}
	card := e.lastCard()
	if err := has(card, "<@UBOB> you are paged (level 2 of it-urgent)", "could not page dave@example.com", "no Slack account"); err != nil {
		t.Fatal(err)
	}
	// And nothing more until bob's 10 minutes are up.
	e.tick(5 * time.Minute)
	if n := len(e.dms("UBOB")); n != 1 {
		t.Fatalf("bob paged %d times", n)
	}
	p, _, _ := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1))
	if p.Step != 2 || strings.Count(unescaped(card.Blocks), "could not page") != 1 {
		t.Fatalf("page %+v, card %s", p, unescaped(card.Blocks))
	}
}

// A member given as a Slack id no user of the workspace has (a typo, or
// an account gone) is unreachable too: the next level at once.
func TestOnCallUnknownSlackIDEscalatesAtOnce(t *testing.T) {
	e := newPageEnvRules(t, strings.Replace(unreachableRulesYAML, "members: [dave@example.com]", "members: [U0NOSUCH]", 1))
	e.poll()
	e.waitPage(func(p oncall.Page) bool { return !p.Sending && p.Level == 1 })
	if dm := e.dms("UBOB"); len(dm) != 1 {
		t.Fatalf("bob's DMs right after U0NOSUCH could not be paged: %+v", dm)
	}
	if err := has(e.lastCard(), "<@UBOB> you are paged (level 2 of it-urgent)", "could not page <@U0NOSUCH>: U0NOSUCH is not a user of this Slack workspace"); err != nil {
		t.Fatal(err)
	}
}

// Escalate now on the last level has nobody left to page: the answer says
// so instead of claiming an escalation.
func TestOnCallEscalateNowOnLastLevel(t *testing.T) {
	e := newPageEnvRules(t, strings.Replace(unreachableRulesYAML, "members: [dave@example.com]", "members: [alice@example.com]", 1))
	e.poll()
	e.tick(10 * time.Minute) // level 2: bob, the last
	if n := len(e.dms("UBOB")); n != 1 {
		t.Fatalf("bob paged %d times", n)
	}
	e.clk.Advance(time.Minute)
	e.clickPage("UBOB", chat.ActionPageEscalate)
	m, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postEphemeral" && m.User == "UBOB"
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "Nobody is left to page: every level of it-urgent was paged") {
		t.Fatalf("answer %q", m.Text)
	}
	e.waitPage(func(p oncall.Page) bool { return p.Exhausted && p.Done })
}

// samePersonRulesYAML pages alice twice: as the on-call of it-primary,
// then as a user level.
var samePersonRulesYAML = pageRules("1d", "alice@example.com, carol@example.com",
	"{schedule: it-primary, after: 10m}", "{user: alice@example.com, after: 10m}")

// dyingStore is a PageStore whose process dies at a moment the test picks:
// from then on no write reaches the store.
type dyingStore struct {
	oncall.PageStore
	dead atomic.Bool
}

func (d *dyingStore) SwapPage(ctx context.Context, p oncall.Page) (bool, error) {
	if d.dead.Load() {
		return false, errors.New("the process died")
	}
	return d.PageStore.SwapPage(ctx, p)
}

// dyingPager delivers the page through Slack, then kills its store: Slack
// has the messages, the store never learns that the step went out.
type dyingPager struct {
	slack *slackchat.Slack
	store *dyingStore
}

func (d *dyingPager) Page(ctx context.Context, r oncall.PageRequest) error {
	err := d.slack.Page(ctx, r)
	d.store.dead.Store(true)
	return err
}

// pageDMs returns the page direct messages posted to user.
func (e *pageEnv) pageDMs(user string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range e.dms(user) {
		if strings.Contains(string(m.Blocks), slackchat.BlockPageDMPrefix) {
			out = append(out, m)
		}
	}
	return out
}

// A process that dies after Slack took a page's DM but before the store
// recorded the step leaves the step claimed; the replica that takes it
// over when the claim runs out finds the DM in the IM's history and does
// not send it again. The next level paging the same person is a new DM.
func TestOnCallPageDMNeverTwiceAfterCrash(t *testing.T) {
	e := newPageEnvRules(t, samePersonRulesYAML)
	ds := &dyingStore{PageStore: e.st}
	dying, err := oncall.NewEscalator(e.esc.Config(), ds, &dyingPager{slack: e.slack, store: ds}, oncall.ClientDesk(e.client))
	if err != nil {
		t.Fatal(err)
	}
	spec := oncall.PageSpec{Rule: "page-urgent", TicketID: e.ticket, Episode: 1, Policy: "it-urgent",
		Channel: "#it-oncall", Text: "Urgent: core switch down"}
	if _, created, err := dying.Start(e.ctx, spec, e.clk.Now()); !created || err == nil {
		t.Fatalf("start on the dying process: created %v, err %v (want created and the store's death)", created, err)
	}
	if n := len(e.pageDMs("UALICE")); n != 1 {
		t.Fatalf("alice has %d page DMs after the first step, want 1", n)
	}
	// The step is still claimed in the store.
	p := e.page()
	if !p.Sending || p.Step != 1 {
		t.Fatalf("stored page after the crash: step %d sending %v", p.Step, p.Sending)
	}
	// Another process: nothing before the claim's 2 minutes run out ...
	e.tick(time.Minute)
	if p := e.page(); !p.Sending {
		t.Fatalf("the claim was taken over before its lease ran out: %+v", p)
	}
	// ... then the step is taken over: confirmed, the card redrawn, and
	// no second DM.
	e.slack.ForgetCards() // a new process remembers nothing
	e.tick(90 * time.Second)
	p = e.page()
	if p.Sending || p.Step != 1 || p.Attempts != 2 {
		t.Fatalf("stored page after the takeover: step %d sending %v attempts %d", p.Step, p.Sending, p.Attempts)
	}
	if dm := e.pageDMs("UALICE"); len(dm) != 1 {
		t.Fatalf("alice has %d page DMs after the takeover, want still 1: %+v", len(dm), dm)
	}
	if n := len(e.cards()); n != 2 || !e.lastCard().Updated {
		t.Fatalf("%d card posts/updates, want the post and an update in place", n)
	}
	// Level 2 pages alice again, as a user level: that is a new step and
	// a new DM.
	e.tick(10 * time.Minute)
	dm := e.pageDMs("UALICE")
	if len(dm) != 2 {
		t.Fatalf("alice has %d page DMs after level 2, want 2", len(dm))
	}
	if err := has(dm[1], "level 2 of it-urgent"); err != nil {
		t.Fatal(err)
	}
}

// Paging the same step again through the transport (a retry after the
// store missed the answer) sends no second DM; a later step does, and a
// first try never looks at the history at all.
func TestSlackPageDMIdempotent(t *testing.T) {
	e := newPageEnv(t)
	p := oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: e.ticket, Episode: 7, Policy: "it-urgent", Channel: "#it-oncall", Text: "disk full"}, e.clk.Now())
	p.Step = 1
	req := oncall.PageRequest{Page: p, Target: oncall.Target{Kind: oncall.TargetPerson, ID: "alice@example.com"},
		Step: 1, Attempt: 1, TicketID: e.ticket, Channel: "#it-oncall", Text: "disk full"}
	histories := func() int {
		n := 0
		for _, c := range e.fake.Calls() {
			if c.Method == "conversations.history" && strings.HasPrefix(c.Form.Get("channel"), "D") {
				n++
			}
		}
		return n
	}
	if err := e.slack.Page(e.ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := histories(); n != 0 {
		t.Fatalf("a first try read the DM history %d times", n)
	}
	retry := req
	retry.Attempt, retry.Retry = 2, true
	for range 2 {
		if err := e.slack.Page(e.ctx, retry); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.pageDMs("UALICE")); n != 1 {
		t.Fatalf("%d DMs after retrying the same step, want 1", n)
	}
	if n := histories(); n != 2 {
		t.Fatalf("%d DM history reads for 2 retries, want one each", n)
	}
	// The next round pages alice again: step 2 is a new DM.
	next := retry
	next.Step, next.Round, next.Attempt, next.Retry = 2, 1, 1, false
	next.Page.Step = 2
	if err := e.slack.Page(e.ctx, next); err != nil {
		t.Fatal(err)
	}
	// A retry of step 2 finds step 2's DM, not only step 1's.
	next.Attempt, next.Retry = 2, true
	if err := e.slack.Page(e.ctx, next); err != nil {
		t.Fatal(err)
	}
	if n := len(e.pageDMs("UALICE")); n != 2 {
		t.Fatalf("%d DMs after step 2 and its retry, want 2", n)
	}
	// Another page of the same ticket (another episode) at step 1 is
	// another message too.
	other := retry
	other.Page.Key = oncall.PageKey("r", e.ticket, 8)
	if err := e.slack.Page(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	if n := len(e.pageDMs("UALICE")); n != 3 {
		t.Fatalf("%d DMs after another page's step 1, want 3", n)
	}
}

// When the history cannot be read (e.g. the app lacks im:history), a
// retried step is sent again: twice is better than never.
func TestSlackPageDMHistoryFailureStillSends(t *testing.T) {
	e := newPageEnv(t)
	p := oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: e.ticket, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall", Text: "disk full"}, e.clk.Now())
	p.Step = 1
	req := oncall.PageRequest{Page: p, Target: oncall.Target{Kind: oncall.TargetPerson, ID: "UBOB"},
		Step: 1, Attempt: 2, Retry: true, TicketID: e.ticket, Channel: "#it-oncall", Text: "disk full"}
	// Both history reads fail: the card's (in the channel) and the DM's.
	e.fake.FailNext("conversations.history", 2, "missing_scope")
	if err := e.slack.Page(e.ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := len(e.pageDMs("UBOB")); n != 1 {
		t.Fatalf("%d DMs, want 1 despite the failed history read", n)
	}
	if !e.logs.has("cannot look for a page's earlier direct message") {
		t.Fatal("the failed history read was not logged")
	}
}
