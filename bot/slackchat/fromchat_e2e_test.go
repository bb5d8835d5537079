package slackchat_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
)

// react adds a reaction as user and waits for its ack.
func (h *e2e) react(user, channel, ts, name string) {
	h.t.Helper()
	env, err := h.fake.ReactionAdded(h.ctx, user, channel, ts, name)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// post posts text as user in C0DESK (in thread when set).
func (h *e2e) post(user, text, thread string) string {
	h.t.Helper()
	ts, err := h.fake.UserMessage(user, "C0DESK", text, thread)
	if err != nil {
		h.t.Fatal(err)
	}
	return ts
}

// waitPosted waits for a message of the bot matching pred.
func (h *e2e) waitPosted(what string, pred func(slackfake.Message) bool) slackfake.Message {
	h.t.Helper()
	m, err := h.fake.WaitMessage(h.ctx, pred)
	if err != nil {
		h.t.Fatalf("no %s: %v", what, err)
	}
	return m
}

func (h *e2e) calls(method string) int {
	n := 0
	for _, c := range h.fake.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// TestTicketReactionEndToEnd: a :ticket: reaction makes one ticket of a
// message, with its thread and permalink, requester its author, and the
// bot answers in the thread; a second reaction gets the same ticket, and
// other reactions do nothing.
func TestTicketReactionEndToEnd(t *testing.T) {
	h := newE2E(t, nil, nil)
	parent := h.post("UCAROL", "Printer on fire\nIt smells of smoke on floor 3", "")
	h.post("UALICE", "I see it too", parent)
	h.post("UCAROL", "now the fire alarm", parent)

	h.react("UBOB", "C0DESK", parent, "thumbsup")
	h.react("UBOB", "C0DESK", parent, "ticket")
	m := h.waitPosted("answer in the thread", func(m slackfake.Message) bool { return m.ThreadTS == parent && !m.Ephemeral })
	if want := "Created ticket #101 from this message: Printer on fire — https://desk.example.com/a/tickets/101"; m.Text != want {
		t.Errorf("thread answer %q; want %q", m.Text, want)
	}
	c := h.fdesk.Creates[0]
	link := "https://fake.slack.com/archives/C0DESK/p" + strings.ReplaceAll(parent, ".", "")
	if c.Email != "carol@example.com" || c.Subject != "Printer on fire" {
		t.Errorf("created %+v; want carol's ticket 'Printer on fire'", c)
	}
	for _, w := range []string{"Printer on fire<br>It smells of smoke on floor 3", "From chat: " + link, "Thread replies so far:<br>alice@example.com: I see it too<br>carol@example.com: now the fire alarm"} {
		if !strings.Contains(c.Description, w) {
			t.Errorf("description %q lacks %q", c.Description, w)
		}
	}
	// A second :ticket:, on the message or after a reply: the same ticket,
	// told to the person alone; no desk request, no reading the message.
	replies := h.calls("conversations.replies")
	h.react("UALICE", "C0DESK", parent, ":ticket:")
	e := h.waitPosted("answer to the second reaction", func(m slackfake.Message) bool { return m.Ephemeral && m.User == "UALICE" })
	if want := "This message is already ticket #101 — https://desk.example.com/a/tickets/101."; e.Text != want {
		t.Errorf("second reaction answered %q; want %q", e.Text, want)
	}
	if n := h.fdesk.Count("create"); n != 1 {
		t.Errorf("%d tickets created; want 1", n)
	}
	if n := h.calls("conversations.replies") - replies; n != 0 {
		t.Errorf("the second reaction read the message %d times", n)
	}
	if replies != 1 {
		t.Errorf("conversations.replies called %d times for one ticket (the thumbs up too?)", replies)
	}

	// A reply in the thread by someone without e-mail becomes a ticket of
	// the reactor, which the answer says; the answer goes to the thread.
	reply := h.post("UNOMAIL", "and the coffee machine", parent)
	h.react("UALICE", "C0DESK", reply, "ticket")
	m = h.waitPosted("answer to the reply's ticket", func(m slackfake.Message) bool {
		return m.ThreadTS == parent && strings.Contains(m.Text, "#102")
	})
	if !strings.Contains(m.Text, "the requester is the person who asked for the ticket") || h.fdesk.Creates[1].Email != "alice@example.com" {
		t.Errorf("answer %q, requester %q; want alice, said so", m.Text, h.fdesk.Creates[1].Email)
	}
	// Someone without e-mail may not open tickets: told why, alone.
	other := h.post("UCAROL", "Wifi slow", "")
	h.react("UNOMAIL", "C0DESK", other, "ticket")
	e = h.waitPosted("refusal", func(m slackfake.Message) bool { return m.Ephemeral && m.User == "UNOMAIL" })
	if !strings.Contains(e.Text, "your chat profile shows no e-mail address") {
		t.Errorf("refusal %q", e.Text)
	}
	// A channel the bot is not in: it says so, and a later try works.
	h.fake.FailNext("conversations.replies", 1, "not_in_channel")
	closed := h.post("UCAROL", "Screen &lt;flickers&gt; in <#C1|it-desk>", "")
	h.react("UALICE", "C0DESK", closed, "ticket")
	e = h.waitPosted("refusal", func(m slackfake.Message) bool {
		return m.Ephemeral && m.User == "UALICE" && strings.Contains(m.Text, "not_in_channel")
	})
	if want := "could not read that message (conversations.replies: not_in_channel); the bot reads only channels it is a member of: invite it there and try again"; e.Text != want {
		t.Errorf("refusal %q; want %q", e.Text, want)
	}
	h.react("UBOB", "C0DESK", closed, "ticket")
	m = h.waitPosted("answer after the retry", func(m slackfake.Message) bool { return m.ThreadTS == closed })
	if c := h.fdesk.Creates[len(h.fdesk.Creates)-1]; !strings.HasPrefix(m.Text, "Created ticket #103") || c.Subject != "Screen <flickers> in #it-desk" {
		t.Errorf("retry: %q, subject %q", m.Text, c.Subject)
	}
	if u := h.fake.UnknownMethods(); len(u) > 0 {
		t.Errorf("bot called methods the fake does not know: %v", u)
	}
}

// TestTicketShortcutEndToEnd: the "Create ticket" shortcut opens the
// new-ticket form with the message's first line; the submitted subject
// wins, and the answer goes to the message's thread.
func TestTicketShortcutEndToEnd(t *testing.T) {
	h := newE2E(t, nil, nil)
	ts := h.post("UCAROL", "  VPN   drops every hour  \nsince Monday", "")
	// Bob and Alice both open the form on the message.
	forms := map[string]slackfake.View{}
	envs := map[string]*slackfake.Envelope{}
	for _, user := range []string{"UBOB", "UALICE"} {
		env, err := h.fake.MessageShortcut(h.ctx, user, "C0DESK", ts, slackchat.ShortcutCallbackID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			t.Fatal(err)
		}
		v, err := h.fake.WaitView(h.ctx, func(v slackfake.View) bool { return v.Method == "views.open" && v.UserID == user })
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(v.Raw), `"initial_value":"VPN drops every hour"`) || !strings.Contains(string(v.Raw), "Ticket from message") {
			t.Errorf("form %s", v.Raw)
		}
		forms[user], envs[user] = v, env
	}
	sub, err := h.fake.ViewSubmission(h.ctx, "UBOB", forms["UBOB"].CallbackID, "", map[string]map[string]string{
		slackchat.FormSubject:  {slackchat.FormSubject: "VPN unstable"},
		slackchat.FormPriority: {slackchat.FormPriority: "3"},
	}, slackfake.WithViewID(forms["UBOB"].ID))
	if err != nil {
		t.Fatal(err)
	}
	if ack, err := sub.WaitAck(h.ctx); err != nil || (ack.Payload != nil && string(ack.Payload) != "null" && string(ack.Payload) != "{}") {
		t.Fatalf("submission ack %s, %v; want a plain ack", ack.Payload, err)
	}
	m := h.waitPosted("answer in the thread", func(m slackfake.Message) bool { return m.ThreadTS == ts })
	if want := "Created ticket #101 from this message: VPN unstable — https://desk.example.com/a/tickets/101"; m.Text != want {
		t.Errorf("answer %q; want %q", m.Text, want)
	}
	if c := h.fdesk.Creates[0]; c.Email != "carol@example.com" || c.Priority != 3 || !strings.Contains(c.Description, "VPN   drops every hour") {
		t.Errorf("created %+v", c)
	}
	// Alice submits the form she opened before: the ticket made, to her.
	if _, err := h.fake.ViewSubmission(h.ctx, "UALICE", forms["UALICE"].CallbackID, "", map[string]map[string]string{slackchat.FormSubject: {slackchat.FormSubject: "again"}}, slackfake.WithViewID(forms["UALICE"].ID)); err != nil {
		t.Fatal(err)
	}
	const already = "This message is already ticket #101 — https://desk.example.com/a/tickets/101."
	r, err := h.fake.WaitResponse(h.ctx, func(r slackfake.Response) bool { return r.EnvelopeID == envs["UALICE"].ID })
	if err != nil || r.Text != already || r.ResponseType != "ephemeral" {
		t.Errorf("second submission answered %+v, %v", r, err)
	}
	// Carol runs the shortcut now: told at once, no form.
	env, err := h.fake.MessageShortcut(h.ctx, "UCAROL", "C0DESK", ts, slackchat.ShortcutCallbackID)
	if err != nil {
		t.Fatal(err)
	}
	r, err = h.fake.WaitResponse(h.ctx, func(r slackfake.Response) bool { return r.EnvelopeID == env.ID })
	if err != nil || r.Text != already {
		t.Errorf("shortcut on a ticketed message answered %+v, %v", r, err)
	}
	for _, v := range h.fake.Views() {
		if v.UserID == "UCAROL" {
			t.Errorf("a form opened for a message that is a ticket: %+v", v)
		}
	}
	if n := h.fdesk.Count("create"); n != 1 {
		t.Errorf("%d tickets created; want 1", n)
	}
}

// TestUnfurlEndToEnd: a shared ticket link unfurls into a card for an
// agent who may see the ticket, through the real sdclient and the desk
// simulator; a requester's link stays a link.
func TestUnfurlEndToEnd(t *testing.T) {
	sim, desk, id := simDesk(t)
	h := newE2E(t, desk, nil)
	link := fmt.Sprintf("https://desk.example.com/a/tickets/%d", id)
	env, ts, err := h.fake.LinkShared(h.ctx, "UALICE", "C0DESK", link, "https://example.org/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	u, err := h.fake.WaitUnfurl(h.ctx, func(u slackfake.Unfurl) bool { return u.TS == ts })
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if len(u.URLs) != 1 || json.Unmarshal(u.URLs[link], &att) != nil {
		t.Fatalf("unfurls %v", u.URLs)
	}
	for _, w := range []string{"Printer on fire", "Urgent", "Open", "unassigned", link} {
		if !strings.Contains(string(att.Blocks), w) {
			t.Errorf("card %s lacks %q", att.Blocks, w)
		}
	}
	// Still in the composer: unfurled by unfurl_id.
	env, uid, err := h.fake.LinkSharedInComposer(h.ctx, "UALICE", link+"?tab=notes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	if u, err := h.fake.WaitUnfurl(h.ctx, func(u slackfake.Unfurl) bool { return u.UnfurlID == uid }); err != nil || u.URLs[link+"?tab=notes"] == nil {
		t.Errorf("composer unfurl %+v, %v", u, err)
	}
	// Carol is a requester: no card, and no ticket read for her.
	sim.Desk.ResetRequests()
	env, _, err = h.fake.LinkShared(h.ctx, "UCAROL", "C0DESK", link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, h.ctx, h.slack)
	if n := len(h.fake.Unfurls()); n != 2 {
		t.Errorf("%d unfurls; want only alice's two", n)
	}
	for _, r := range sim.Desk.Requests() {
		if strings.HasPrefix(r.Path, "/api/v2/tickets/") {
			t.Errorf("read %s for a requester's link", r.Path)
		}
	}
}
