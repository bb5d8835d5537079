package slackchat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
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
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	set, err := rules.Load("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	fp := &forwardPager{}
	esc, err := oncall.NewEscalator(set.OnCall(), st, fp, bot.NewOnCallDesk(client), oncall.WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	h := newE2E(t, bot.NewDeskAdapter(client), []bot.Option{bot.WithClock(clk.Now), bot.WithOnCall(esc)}, slackchat.WithClock(clk.Now))
	fp.p.Store(h.slack)
	sched, err := scheduler.New(slog.New(h.logs), scheduler.ClientDesk(client), set, st, nil,
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
	set, _ := rules.Load("rules.yaml", []byte(pageRulesYAML))
	esc2, err := oncall.NewEscalator(set.OnCall(), e.st, fp, bot.NewOnCallDesk(e.client))
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
	if len(notes) != 1 || !strings.Contains(notes[0], "On-call page acknowledged by bob@example.com at 2026-03-02 12:13:00 UTC") {
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
	if !strings.Contains(r.Text, fmt.Sprintf("no page of ticket #%d is waiting for an acknowledgement: bob@example.com already acknowledged the page at 2026-03-02 12:13 UTC.", e.ticket)) {
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
	if n := e.notes(); len(n) != 1 || !strings.Contains(n[0], "On-call page taken (assigned to them) by alice@example.com at 2026-03-02 12:02:00 UTC") {
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
	if n := e.notes(); len(n) != 1 || !strings.Contains(n[0], "acknowledged by alice@example.com") {
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
	tk, err := e.desk.Ticket(e.ctx, e.ticket)
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("deskbot:f=page-urgent/%d/1.1/1", e.ticket)
	if err := e.slack.Alert(e.ctx, bot.AlertMessage{Channel: "#it-oncall", Text: "Urgent", Ticket: tk, Rule: "page-urgent", Key: key}); err != nil {
		t.Fatal(err)
	}
	m, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), slackchat.MarkerBlockID(key))
	})
	if err != nil {
		t.Fatal(err)
	}
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
