package slackchat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// retried delivers env's event twice more, as Slack retries an event it
// saw no timely ack for (retry_attempt 1 and 2, new envelope ids, the same
// event_id), and the very envelope once more; it waits for every ack and
// for the work they started.
func (h *e2e) retried(env *slackfake.Envelope) {
	h.t.Helper()
	again := env
	for range 2 {
		var err error
		if again, err = h.fake.RetryEvent(h.ctx, again); err != nil {
			h.t.Fatal(err)
		}
		if _, err := again.WaitAck(h.ctx); err != nil {
			h.t.Fatalf("retry %d not acked: %v", again.RetryAttempt, err)
		}
	}
	h.redeliver(env)
	waitIdle(h.t, h.ctx, h.slack)
}

// TestEventRetriesActOnce (issue 27, item 3): an Events API event Slack
// delivers again (same event_id, retry_attempt >= 1) acts once: one ticket
// from a reaction, one thread copy, one unfurl.
func TestEventRetriesActOnce(t *testing.T) {
	t.Run("reaction", func(t *testing.T) {
		h := newE2E(t, nil, nil)
		parent := h.post("UCAROL", "Printer on fire", "")
		env, err := h.fake.ReactionAdded(h.ctx, "UBOB", "C0DESK", parent, "ticket")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			t.Fatal(err)
		}
		h.waitPosted("answer in the thread", func(m slackfake.Message) bool { return m.ThreadTS == parent })
		h.retried(env)
		if n := h.fdesk.Count("create"); n != 1 {
			t.Errorf("%d tickets made; want 1", n)
		}
		answers := 0
		for _, m := range h.fake.Messages() {
			if m.ThreadTS == parent {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("%d answers in the thread; want 1", answers)
		}
	})
	t.Run("thread reply", func(t *testing.T) {
		e := newThreadEnv(t)
		alert := e.alerted()
		_, env, err := e.fake.PostUserMessage(e.ctx, slackfake.UserMessage{UserID: "UALICE", ChannelID: oncallID, ThreadTS: alert.TS, Text: "fuser ordered"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.retried(env)
		copies := 0
		for _, c := range e.sim.Desk.Conversations(e.ticket) {
			if strings.Contains(c.Body, "fuser ordered") {
				copies++
			}
		}
		told := 0
		for _, m := range e.fake.Messages() {
			if m.Ephemeral && m.User == "UALICE" && m.ThreadTS == alert.TS {
				told++
			}
		}
		if copies != 1 || told != 1 {
			t.Errorf("%d copies on the desk, author told %d times; want 1 and 1", copies, told)
		}
	})
	t.Run("unfurl", func(t *testing.T) {
		_, desk, id := simDesk(t)
		h := newE2E(t, desk, nil)
		link := fmt.Sprintf("https://desk.example.com/a/tickets/%d", id)
		env, ts, err := h.fake.LinkShared(h.ctx, "UALICE", "C0DESK", link)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := h.fake.WaitUnfurl(h.ctx, func(u slackfake.Unfurl) bool { return u.TS == ts }); err != nil {
			t.Fatal(err)
		}
		h.retried(env)
		if n := len(h.fake.Unfurls()); n != 1 {
			t.Errorf("%d unfurls; want 1", n)
		}
	})
}

// TestDisconnectReasons (issue 27, item 3): for each reason Slack gives
// when it asks a client to reconnect, deskbot reconnects; a command sent
// while it reconnects is delivered on the new connection and answered
// once, and Slack's redelivery of it there (it saw no ack on the old one)
// is acked and dropped, not answered twice.
func TestDisconnectReasons(t *testing.T) {
	for _, reason := range []string{"refresh_requested", "warning", "link_disabled"} {
		t.Run(reason, func(t *testing.T) {
			h := newE2E(t, nil, nil)
			if r := h.slash("UALICE", "/ticket", "show 42"); !strings.Contains(all(r), "Printer on fire") {
				t.Fatalf("before: %q", r.Text)
			}
			opened := h.fake.ConnectionsOpened()
			h.fake.DisconnectReason(reason)
			// Sent at once: the fake holds it until a connection is open.
			env := h.send(slackfake.SlashCommand{Command: "/ticket", Text: "show 42", UserID: "UBOB", ChannelID: "C0DESK"})
			if r := h.response(env); !strings.Contains(all(r), "Printer on fire") {
				t.Fatalf("command sent while reconnecting answered %q", r.Text)
			}
			h.redeliver(env)
			waitIdle(t, h.ctx, h.slack)
			answers := 0
			for _, r := range h.fake.Responses() {
				if r.EnvelopeID == env.ID {
					answers++
				}
			}
			if answers != 1 {
				t.Errorf("the command was answered %d times; want once", answers)
			}
			if n := h.fake.ConnectionsOpened(); n != opened+1 {
				t.Errorf("%d connections opened after the disconnect; want 1", n-opened)
			}
		})
	}
}
