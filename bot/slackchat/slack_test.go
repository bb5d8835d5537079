package slackchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// recordLogs is a slog handler that keeps messages, for tests that wait for
// something the bot only logs (a dropped duplicate).
type recordLogs struct {
	mu      sync.Mutex
	msgs    []string
	changed chan struct{} // closed and replaced on every record; nil: none yet
}

// wait blocks until cond (which may read the logs) holds or ctx ends.
func (l *recordLogs) wait(ctx context.Context, cond func() bool) error {
	for {
		l.mu.Lock()
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *recordLogs) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLogs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordLogs) WithGroup(string) slog.Handler            { return l }
func (l *recordLogs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := r.Message
	r.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
	l.msgs = append(l.msgs, s)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return nil
}

func (l *recordLogs) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}

type e2e struct {
	t      *testing.T
	fake   *slackfake.Server
	desk   bot.Desk
	fdesk  *fakedesk.Desk // nil when desk is not the fake
	slack  *slackchat.Slack
	router *bot.Router
	logs   *recordLogs
	acks   *memAcks
	ctx    context.Context
}

const oncallID = "C0ONCALL"

type memAcks struct {
	mu   sync.Mutex
	keys []string
}

func (m *memAcks) Acknowledge(_ context.Context, key, by string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys = append(m.keys, key+" by "+by)
	return nil
}

func (m *memAcks) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.keys...)
}

func slackUsers() []slackfake.User {
	return []slackfake.User{
		{ID: "UALICE", Name: "alice", Email: "alice@example.com"},
		{ID: "UBOB", Name: "bob", Email: "bob@example.com"},
		{ID: "UCAROL", Name: "carol", Email: "carol@example.com"},
		{ID: "UNOMAIL", Name: "nomail"},
	}
}

// newE2E starts a fake Slack, a Slack transport over the real slack-go
// client and a router over desk (a fresh fakeDesk when nil).
func newE2E(t testing.TB, desk bot.Desk, ropts []bot.Option, sopts ...slackchat.Option) *e2e {
	fake := slackfake.New(slackfake.WithUsers(slackUsers()...), slackfake.WithChannels(slackfake.Channel{ID: oncallID, Name: "it-oncall"}))
	t.Cleanup(fake.Close)
	// The API URL without its final "/": the transport adds it.
	sopts = append([]slackchat.Option{slackchat.WithAPIURL(strings.TrimSuffix(fake.APIURL(), "/"))}, sopts...)
	return newE2EWith(t, fake, desk, ropts, sopts...)
}

// press clicks button action (with value) of message m as user, waits for
// the ack and returns how many messages the fake had recorded before.
func (h *e2e) press(user string, m slackfake.Message, action, value string) int {
	h.t.Helper()
	before := len(h.fake.Messages())
	env, err := h.fake.BlockAction(h.ctx, user, m.Channel, m.TS, action, value)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		h.t.Fatal(err)
	}
	return before
}

// redeliver delivers env again, as Slack does when it saw no ack, and
// waits for the ack.
func (h *e2e) redeliver(env *slackfake.Envelope) {
	h.t.Helper()
	again, err := h.fake.Redeliver(h.ctx, env)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := again.WaitAck(h.ctx); err != nil {
		h.t.Fatalf("redelivery not acked: %v", err)
	}
}

// slash sends a command, checks it is acked quickly and returns the answer
// posted to its response_url.
func (h *e2e) slash(user, cmd, text string) slackfake.Response {
	h.t.Helper()
	env := h.send(slackfake.SlashCommand{Command: cmd, Text: text, UserID: user, ChannelID: "C0DESK"})
	return h.response(env)
}

func (h *e2e) send(cmd slackfake.SlashCommand) *slackfake.Envelope {
	h.t.Helper()
	env, err := h.fake.SlashCommand(h.ctx, cmd)
	if err != nil {
		h.t.Fatal(err)
	}
	ack, err := env.WaitAck(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if ack.Payload != nil && string(ack.Payload) != "null" && string(ack.Payload) != "{}" {
		h.t.Errorf("slash ack carried a payload: %s", ack.Payload)
	}
	return env
}

func (h *e2e) response(env *slackfake.Envelope) slackfake.Response {
	h.t.Helper()
	r, err := h.fake.WaitResponse(h.ctx, func(r slackfake.Response) bool { return r.EnvelopeID == env.ID })
	if err != nil {
		h.t.Fatalf("no answer to %s: %v", env.ID, err)
	}
	return r
}

// all is the text of an answer with its blocks, for substring checks.
func all(r slackfake.Response) string { return r.Text + "\n" + string(r.Blocks) }

func TestSlackCommandsEndToEnd(t *testing.T) {
	h := newE2E(t, nil, nil)
	tests := []struct {
		name, user, cmd, text string
		want                  []string
		check                 func(t *testing.T, d *fakedesk.Desk)
	}{
		{"new", "UCAROL", "/ticket", "new Printer on fire", []string{"Created ticket #101: Printer on fire — https://desk.example.com/a/tickets/101"}, func(t *testing.T, d *fakedesk.Desk) {
			if got := d.Creates[len(d.Creates)-1]; got.Email != "carol@example.com" || got.Subject != "Printer on fire" {
				t.Errorf("created %+v", got)
			}
		}},
		{"show", "UALICE", "/ticket", "show 42", []string{"Printer on fire", "Carol Requester", "Hardware", "Fire brigade called.", `"action_id":"deskbot_assign_me"`, `"action_id":"deskbot_close"`}, nil},
		{"note", "UALICE", "/ticket", "note 42 checked the toner", []string{"Added a private note to ticket #42."}, nil},
		{"reply", "UALICE", "/ticket", "reply 42 on our way", []string{"the desk e-mails the reply to the requester"}, nil},
		{"status", "UALICE", "/ticket", "status 42 pending", []string{"Ticket #42 is now Pending."}, nil},
		{"status custom", "UALICE", "/ticket", "status 42 Waiting on vendor", []string{"Ticket #42 is now Waiting on vendor."}, nil},
		{"priority", "UALICE", "/ticket", "priority 42 high", []string{"Ticket #42 priority is now High."}, nil},
		{"mine", "UALICE", "/ticket", "mine", []string{"Your open tickets: 1", "#43"}, nil},
		{"search", "UALICE", "/ticket", "search priority:3 OR priority:4", []string{"Tickets matching priority:3 OR priority:4: 2"}, nil},
		{"unassigned", "UBOB", "/ticket", "unassigned", []string{"Open unassigned tickets: ", "#42 Waiting on vendor · High · unassigned — Printer on fire"}, nil},
		{"why", "UALICE", "/ticket", "why 42", []string{"no rules loaded"}, nil},
		{"help", "UCAROL", "/ticket", "help", []string{"/ticket search &lt;filter expression&gt;", "/assign N @user|e-mail|me"}, nil},
		{"assign mention", "UALICE", "/assign", "42 <@UBOB|bob>", []string{"Ticket #42 is assigned to Bob Builder."}, func(t *testing.T, d *fakedesk.Desk) {
			if r := d.Snapshot(42).ResponderID; r == nil || *r != 8 {
				t.Errorf("responder %v, want 8", r)
			}
		}},
		{"assign me", "UALICE", "/assign", "43 me", []string{"Ticket #43 is assigned to Alice Agent."}, nil},
		{"resolve", "UALICE", "/ticket", "resolve 43", []string{"Ticket #43 is now Resolved."}, nil},
		{"close", "UALICE", "/ticket", "close 43", []string{"Ticket #43 is now Closed."}, func(t *testing.T, d *fakedesk.Desk) {
			if s := d.Snapshot(43).Status; s != 5 {
				t.Errorf("status %d, want 5", s)
			}
		}},
		// Bad input never gets silence.
		{"unknown subcommand", "UALICE", "/ticket", "dance", []string{"unknown command /ticket dance; usage: /ticket new [subject]"}, nil},
		{"missing argument", "UALICE", "/ticket", "note 42", []string{"missing text; usage: /ticket note N text"}, nil},
		{"non-numeric id", "UALICE", "/ticket", "show forty-two", []string{`"forty-two" is not a ticket number; usage: /ticket show N`}, nil},
		{"not found", "UALICE", "/ticket", "show 999", []string{"ticket 999 not found"}, nil},
		{"non-agent", "UCAROL", "/ticket", "close 42", []string{"only desk agents can use /ticket close; carol@example.com is not an agent"}, nil},
		{"no e-mail", "UNOMAIL", "/ticket", "new help", []string{"your chat profile shows no e-mail address"}, nil},
		{"bad filter", "UALICE", "/ticket", "search prority:4", []string{"bad filter expression: filter: column 1: unknown field", "did you mean"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.slash(tc.user, tc.cmd, tc.text)
			got := all(r)
			// Slack decodes HTML entities the bot escapes; compare decoded.
			got = strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(got)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("answer %s\nwant it to contain %q", got, w)
				}
			}
			if r.ResponseType != "ephemeral" {
				t.Errorf("response type %q, want ephemeral", r.ResponseType)
			}
			if tc.check != nil {
				tc.check(t, h.fdesk)
			}
		})
	}
	if u := h.fake.UnknownMethods(); len(u) > 0 {
		t.Errorf("bot called methods the fake does not know: %v", u)
	}
}

func TestSlackDeskErrors(t *testing.T) {
	h := newE2E(t, nil, nil)
	h.fdesk.FailNext("update", sdclient.ErrForbidden)
	if r := h.slash("UALICE", "/ticket", "close 42"); !strings.Contains(r.Text, "the desk does not let you close ticket 42") {
		t.Errorf("403 answer %q", r.Text)
	}
	h.fdesk.FailNext("ticket", fakedesk.Busy(20*time.Millisecond))
	if r := h.slash("UALICE", "/ticket", "show 42"); !strings.Contains(all(r), "Printer on fire") {
		t.Errorf("429 on a read was not retried: %q", r.Text)
	}
	h.fdesk.FailNext("create", fakedesk.Busy(20*time.Second))
	if r := h.slash("UCAROL", "/ticket", "new Mouse broken"); !strings.Contains(r.Text, "could not open a ticket: the desk is rate-limiting deskbot: retry in 20 s") {
		t.Errorf("429 answer %q", r.Text)
	}
	if n := h.fdesk.Count("create"); n != 1 {
		t.Errorf("create called %d times; a create must not be retried", n)
	}
	h.fdesk.Mu.Lock()
	h.fdesk.PanicOn = "note"
	h.fdesk.Mu.Unlock()
	if r := h.slash("UALICE", "/ticket", "note 42 boom"); !strings.Contains(r.Text, "something went wrong running /ticket note; it has been logged") {
		t.Errorf("panic answer %q", r.Text)
	}
	if !h.logs.has("command panicked command=ticket note panic=fake desk exploded in note") {
		t.Error("the panic was not logged")
	}
	h.fdesk.Mu.Lock()
	h.fdesk.PanicOn = ""
	h.fdesk.Mu.Unlock()
	if r := h.slash("UALICE", "/ticket", "note 42 still here"); !strings.Contains(r.Text, "Added a private note") {
		t.Errorf("bot not up after a panic: %q", r.Text)
	}
}

func TestSlackRedeliveredEnvelopeDropped(t *testing.T) {
	h := newE2E(t, nil, nil)
	env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "new Only once", UserID: "UCAROL", ChannelID: "C0DESK"})
	h.response(env)
	h.redeliver(env)
	if err := h.logs.wait(h.ctx, func() bool { return h.logs.has("dropped a redelivered envelope envelope=" + env.ID) }); err != nil {
		t.Fatal("redelivery was not dropped")
	}
	if n := h.fdesk.Count("create"); n != 1 {
		t.Fatalf("create called %d times for one command", n)
	}
	if n := len(h.fake.Responses()); n != 1 {
		t.Fatalf("%d answers, want 1", n)
	}
}

func TestSlackOtherTeamRefused(t *testing.T) {
	h := newE2E(t, nil, nil)
	env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "new Intruder", UserID: "UALICE", ChannelID: "C0DESK", TeamID: "T0EVIL"})
	r := h.response(env)
	if !strings.Contains(r.Text, "this deskbot serves another Slack workspace") {
		t.Fatalf("answer %q", r.Text)
	}
	if n := h.fdesk.Count("create") + h.fdesk.Count("agentByEmail"); n != 0 {
		t.Fatalf("desk called %d times for a foreign team", n)
	}
}

func TestSlackNewTicketModal(t *testing.T) {
	h := newE2E(t, nil, nil)
	env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "new", UserID: "UCAROL", ChannelID: "C0DESK"})
	v, err := h.fake.WaitView(h.ctx, func(v slackfake.View) bool { return v.TriggerID == env.TriggerID })
	if err != nil {
		t.Fatal(err)
	}
	if v.CallbackID != slackchat.FormCallbackID || !strings.Contains(string(v.Raw), "Hardware") {
		t.Fatalf("view %+v %s", v, v.Raw)
	}
	// An empty subject is refused in the ack, the modal stays open.
	sub, err := h.fake.ViewSubmission(h.ctx, "UCAROL", slackchat.FormCallbackID, v.PrivateMetadata, map[string]map[string]string{slackchat.FormSubject: {slackchat.FormSubject: "  "}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := sub.WaitAck(h.ctx)
	if err != nil || !strings.Contains(string(ack.Payload), `"response_action":"errors"`) {
		t.Fatalf("ack of empty subject: %s, %v", ack.Payload, err)
	}
	sub, err = h.fake.ViewSubmission(h.ctx, "UCAROL", slackchat.FormCallbackID, v.PrivateMetadata, map[string]map[string]string{
		slackchat.FormSubject: {slackchat.FormSubject: "Keyboard"}, slackchat.FormDescription: {slackchat.FormDescription: "keys stick"},
		slackchat.FormPriority: {slackchat.FormPriority: "3"}, slackchat.FormGroup: {slackchat.FormGroup: "4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	r := h.response(env) // answered on the slash command's response_url
	if !strings.Contains(r.Text, "Created ticket #101: Keyboard") {
		t.Fatalf("answer %q", r.Text)
	}
	got := h.fdesk.Creates[0]
	if got.Email != "carol@example.com" || got.Priority != 3 || got.GroupID != 4 || got.Description != "keys stick" {
		t.Fatalf("created %+v", got)
	}
}

func (h *e2e) alert(key string, ticket int64) slackfake.Message {
	h.t.Helper()
	t, err := h.desk.Ticket(h.ctx, ticket)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.slack.Alert(h.ctx, chat.AlertMessage{Channel: "#it-oncall", Text: "Urgent ticket unassigned", Mention: "UALICE", Ticket: t, Rule: "page-urgent", Key: key}); err != nil {
		h.t.Fatal(err)
	}
	m, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postMessage" && strings.Contains(string(m.Blocks), slackchat.MarkerBlockID(key))
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

func (h *e2e) click(user string, m slackfake.Message, action string) slackfake.Message {
	h.t.Helper()
	value := ""
	var blocks []map[string]any
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		for _, e := range els {
			if em, ok := e.(map[string]any); ok && em["action_id"] == action {
				value, _ = em["value"].(string)
			}
		}
	}
	if value == "" {
		h.t.Fatalf("no %s button on the card", action)
	}
	before := h.press(user, m, action, value)
	var update slackfake.Message
	err := h.fake.Wait(h.ctx, func() bool {
		for _, u := range h.fake.Messages()[before:] {
			if u.Method == "chat.update" && u.TS == m.TS {
				update = u
				return true
			}
		}
		return false
	})
	if err != nil {
		h.t.Fatalf("card not updated after %s: %v", action, err)
	}
	return update
}

func TestSlackAlertButtons(t *testing.T) {
	h := newE2E(t, nil, nil)
	m := h.alert("deskbot:f=page-urgent/42/1.1/0", 42)
	if m.Channel != oncallID || !strings.Contains(string(m.Blocks), `\u003c@UALICE\u003e Urgent ticket unassigned`) {
		t.Fatalf("alert %s in %s", m.Blocks, m.Channel)
	}
	for _, a := range []string{chat.ActionAssignMe, chat.ActionAcknowledge, chat.ActionResolve} {
		if !strings.Contains(string(m.Blocks), a) {
			t.Errorf("alert has no %s button", a)
		}
	}

	up := h.click("UBOB", m, chat.ActionAssignMe)
	if r := h.fdesk.Snapshot(42).ResponderID; r == nil || *r != 8 {
		t.Fatalf("responder %v, want Bob (8)", r)
	}
	if !strings.Contains(string(up.Blocks), "Bob Builder assigned the ticket to themself") || !strings.Contains(string(up.Blocks), `"text":"*Agent*\nBob Builder"`) {
		t.Fatalf("updated card %s", up.Blocks)
	}

	up = h.click("UALICE", up, chat.ActionAcknowledge)
	if acks := h.acks.list(); len(acks) != 1 || acks[0] != "deskbot:f=page-urgent/42/1.1/0 by alice@example.com" {
		t.Fatalf("acks %v", acks)
	}
	if c := h.fdesk.Conversations(); len(c) != 1 || c[0].UserID != 7 || !c[0].Private {
		t.Fatalf("ack note %+v", c)
	}
	if !strings.Contains(string(up.Blocks), "Alice Agent acknowledged") || !strings.Contains(string(up.Blocks), "Bob Builder assigned") {
		t.Fatalf("activity lost: %s", up.Blocks)
	}

	up = h.click("UALICE", up, chat.ActionResolve)
	if s := h.fdesk.Snapshot(42).Status; s != sdclient.StatusResolved {
		t.Fatalf("status %d", s)
	}
	if strings.Contains(string(up.Blocks), `"type":"actions"`) || !strings.Contains(string(up.Blocks), "Alice Agent resolved the ticket") {
		t.Fatalf("resolved card still has buttons or no activity: %s", up.Blocks)
	}

	ok, err := h.slack.AlreadyAlerted(h.ctx, "#it-oncall", "deskbot:f=page-urgent/42/1.1/0")
	if err != nil || !ok {
		t.Fatalf("AlreadyAlerted = %v, %v; want true", ok, err)
	}
	ok, err = h.slack.AlreadyAlerted(h.ctx, oncallID, "page-urgent/42/2")
	if err != nil || ok {
		t.Fatalf("AlreadyAlerted(other key) = %v, %v; want false", ok, err)
	}
}

func TestSlackAlertClickByNonAgent(t *testing.T) {
	h := newE2E(t, nil, nil)
	m := h.alert("k1", 42)
	env, err := h.fake.BlockAction(h.ctx, "UCAROL", m.Channel, m.TS, chat.ActionResolve, chat.ButtonValue(42, "page-urgent", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	e, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool { return m.Method == "chat.postEphemeral" && m.User == "UCAROL" })
	if err != nil || !strings.Contains(e.Text, "only desk agents") {
		t.Fatalf("refusal %+v, %v", e, err)
	}
	if s := h.fdesk.Snapshot(42).Status; s != 2 {
		t.Fatalf("a requester resolved the ticket (status %d)", s)
	}
}

func TestSlackTicketCardButton(t *testing.T) {
	h := newE2E(t, nil, nil)
	h.slash("UALICE", "/ticket", "show 42")
	env, err := h.fake.BlockAction(h.ctx, "UALICE", "C0DESK", "1700000000.000100", chat.ActionClose, "42")
	if err != nil {
		t.Fatal(err)
	}
	r := h.response(env)
	if !r.ReplaceOriginal || !strings.Contains(all(r), "Alice Agent closed the ticket") || strings.Contains(string(r.Blocks), chat.ActionClose) {
		t.Fatalf("card answer %+v", r)
	}
	if s := h.fdesk.Snapshot(42).Status; s != 5 {
		t.Fatalf("status %d", s)
	}
}

func TestSlackReconnects(t *testing.T) {
	h := newE2E(t, nil, nil)
	h.fake.Disconnect()
	if err := h.fake.WaitConnected(h.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if r := h.slash("UALICE", "/ticket", "show 42"); !strings.Contains(all(r), "Printer on fire") {
		t.Fatalf("after reconnect: %q", r.Text)
	}
	if n := h.fake.ConnectionsOpened(); n < 2 {
		t.Fatalf("%d connections opened", n)
	}
	for !h.slack.Ready() {
		select {
		case <-h.ctx.Done():
			t.Fatal("not ready after reconnect")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestSlackInvalidAuthStops(t *testing.T) {
	for _, tc := range []struct{ name, bot, app string }{
		{"bad bot token", "xoxb-wrong", slackfake.DefaultAppToken},
		{"bad app token", slackfake.DefaultBotToken, "xapp-wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := slackfake.New()
			defer fake.Close()
			r := routertest.New(t, fakedesk.New())
			opts := []slackchat.Option{slackchat.WithAPIURL(fake.APIURL()), slackchat.WithReconnectBackoff(time.Millisecond, 10*time.Millisecond)}
			if tc.bot == slackfake.DefaultBotToken {
				opts = append(opts, slackchat.WithTeamID(fake.TeamID()))
			}
			s, err := slackchat.New(r, slog.New(slog.DiscardHandler), tc.bot, tc.app, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = s.Run(ctx)
			if !errors.Is(err, slackchat.ErrSlackAuth) || strings.Contains(err.Error(), "wrong") {
				t.Fatalf("Run = %v, want ErrSlackAuth without the token", err)
			}
			if s.Ready() {
				t.Fatal("ready after auth failure")
			}
		})
	}
}

func TestNewSlackOptions(t *testing.T) {
	r := routertest.New(t, fakedesk.New())
	log := slog.New(slog.DiscardHandler)
	if _, err := slackchat.New(r, log, "xapp-1", "xapp-2"); err == nil {
		t.Error("bot token not checked")
	}
	if _, err := slackchat.New(r, log, "xoxb-1", "xoxb-2"); err == nil {
		t.Error("app token not checked")
	}
	if _, err := slackchat.New(r, log, "xoxb-1", "xapp-2", slackchat.WithAPIURL("slack.example.com/api")); err == nil {
		t.Error("bad API URL accepted")
	}
}

// countingDesk counts the tickets one bot instance created.
type countingDesk struct {
	bot.Desk
	mu      sync.Mutex
	created int
}

func (d *countingDesk) CreateTicket(ctx context.Context, t *sdclient.TicketCreate) (*sdclient.Ticket, error) {
	d.mu.Lock()
	d.created++
	d.mu.Unlock()
	return d.Desk.CreateTicket(ctx, t)
}

func (d *countingDesk) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.created
}

// TestSlackRedeliveryAcrossReplicas runs two bot instances on two socket
// connections sharing one envelope store, as two replicas would: Slack
// redelivers a /ticket new to the other connection, and the ticket is
// still created once.
func TestSlackRedeliveryAcrossReplicas(t *testing.T) {
	shared := &slackchat.MemoryEnvelopes{}
	fdesk := fakedesk.New()
	deskA := &countingDesk{Desk: fdesk}
	h := newE2E(t, deskA, nil, slackchat.WithEnvelopeStore(shared))

	deskB := &countingDesk{Desk: fdesk}
	logsB := &recordLogs{}
	rB, err := bot.NewRouter(deskB, slog.New(logsB))
	if err != nil {
		t.Fatal(err)
	}
	sB, err := slackchat.New(rB, slog.New(logsB), h.fake.BotToken(), h.fake.AppToken(), slackchat.WithAPIURL(h.fake.APIURL()), slackchat.WithEnvelopeStore(shared))
	if err != nil {
		t.Fatal(err)
	}
	runSlack(t, sB)
	if err := h.fake.WaitConnected(h.ctx, 2); err != nil {
		t.Fatal(err)
	}

	env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "new Only once", UserID: "UCAROL", ChannelID: "C0DESK"})
	h.response(env)
	// The fake hands envelopes to its connections in turn: the redelivery
	// goes to the replica that did not run the command.
	h.redeliver(env)
	ran, other := deskA, logsB
	if deskB.count() == 1 {
		ran, other = deskB, h.logs
	}
	dropped := "dropped a redelivered envelope envelope=" + env.ID
	if err := other.wait(h.ctx, func() bool { return other.has(dropped) }); err != nil {
		t.Fatalf("the other replica did not drop the redelivery (creates: A %d, B %d)", deskA.count(), deskB.count())
	}
	if a, b := deskA.count(), deskB.count(); a+b != 1 || ran.count() != 1 {
		t.Fatalf("tickets created: replica A %d, replica B %d; want one in all", a, b)
	}
	if n := len(h.fake.Responses()); n != 1 {
		t.Fatalf("%d answers, want 1", n)
	}
}

// TestSlackModalOpensWhileDeskIsSlow: the new-ticket form must be opened
// with views.open within the trigger's 3 s even when the desk takes 5 s to
// list the groups; the form then comes without the group choice.
func TestSlackModalOpensWhileDeskIsSlow(t *testing.T) {
	d := fakedesk.New()
	d.Delay = 5 * time.Second
	h := newE2E(t, d, nil)
	env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "new", UserID: "UCAROL", ChannelID: "C0DESK"})
	v, err := h.fake.WaitView(h.ctx, func(v slackfake.View) bool { return v.TriggerID == env.TriggerID })
	if err != nil {
		t.Fatalf("no view opened: %v (answers: %+v)", err, h.fake.Responses())
	}
	if v.CallbackID != slackchat.FormCallbackID || strings.Contains(string(v.Raw), `"block_id":"group"`) {
		t.Fatalf("view %s", v.Raw)
	}
}

// ackOnlyOnCall gives every ticket one page, which any acknowledgement
// wins and whose card the transport then redraws.
type ackOnlyOnCall struct {
	bot.OnCall
	page oncall.Page
}

func (o ackOnlyOnCall) TicketPages(context.Context, int64) ([]oncall.Page, error) {
	return []oncall.Page{o.page}, nil
}

func (o ackOnlyOnCall) Ack(_ context.Context, _, by string, now time.Time) (oncall.Page, bool, error) {
	p := o.page
	p.Ack(by, now)
	return p, true, nil
}

// Config has alice on the page's policy: she may acknowledge it without
// an access check that reads the ticket.
func (o ackOnlyOnCall) Config() *oncall.Config {
	return &oncall.Config{Policies: []*oncall.Policy{{Name: o.page.Policy, Levels: []oncall.Level{{Kind: oncall.TargetPerson, Name: "alice@example.com"}}}}}
}

// TestSlackTransportPanicAnswered: a panic in the transport's own work
// after the router answered (here: redrawing a page card while the desk
// blows up) is logged, answered on the command's response_url, and the
// bot stays up.
func TestSlackTransportPanicAnswered(t *testing.T) {
	page := oncall.Page{Key: "p1", TicketID: 42, Channel: oncallID, Policy: "it"}
	h := newE2E(t, nil, []bot.Option{bot.WithOnCall(ackOnlyOnCall{page: page})})
	h.slack.RememberCard(page.Key, oncallID, "1.000001")
	h.fdesk.Mu.Lock()
	h.fdesk.PanicOn = "ticket"
	h.fdesk.Mu.Unlock()

	r := h.slash("UALICE", "/oncall", "ack 42")
	if !strings.Contains(r.Text, "something went wrong running /oncall; it has been logged") {
		t.Fatalf("answer %q", r.Text)
	}
	if !h.logs.has("envelope handler panicked") || !h.logs.has("fake desk exploded in ticket") {
		t.Fatal("the panic was not logged")
	}
	h.fdesk.Mu.Lock()
	h.fdesk.PanicOn = ""
	h.fdesk.Mu.Unlock()
	if r := h.slash("UALICE", "/ticket", "show 42"); !strings.Contains(all(r), "Printer on fire") {
		t.Fatalf("bot not up after a panic: %q", r.Text)
	}
}
