package slackchat_test

import (
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
)

// A rule's dm: reaches the person through the real slack-go client: the
// e-mail is looked up once (users.lookupByEmail, cached), the message goes
// to the bot's DM with them, carries a link to the ticket, and a resumed
// firing finds it (AlreadyDMed). An e-mail no Slack user has, or no one
// to write to, posts to the fallback channel saying why.
func TestDMEndToEnd(t *testing.T) {
	h := newE2E(t, nil, nil)
	tk := &sdclient.Ticket{ID: 42, Subject: "Printer on fire"}
	m := chat.DMMessage{To: "bob@example.com", Who: "the assignee Bob Builder", Channel: "#it-oncall",
		Text: "Ticket #42 is due in 30 minutes", Rule: "nudge", Key: "deskbot:f=nudge/42/1.1/0", Ticket: tk}
	if found, err := h.slack.AlreadyDMed(h.ctx, m); err != nil || found {
		t.Fatalf("AlreadyDMed before sending = %v, %v", found, err)
	}
	if err := h.slack.DM(h.ctx, m); err != nil {
		t.Fatal(err)
	}
	dm := lastIn(t, h.fake, "DUBOB")
	if !strings.Contains(dm.Text, "Ticket #42 is due in 30 minutes") ||
		!strings.Contains(string(dm.Blocks), "https://desk.example.com/a/tickets/42|#42 Printer on fire") {
		t.Fatalf("direct message: %q %s", dm.Text, dm.Blocks)
	}
	if found, err := h.slack.AlreadyDMed(h.ctx, m); err != nil || !found {
		t.Fatalf("AlreadyDMed after sending = %v, %v", found, err)
	}
	m2 := m
	m2.Key = "deskbot:f=nudge/43/1.1/0"
	if err := h.slack.DM(h.ctx, m2); err != nil {
		t.Fatal(err)
	}
	if n := countCalls(h.fake, "users.lookupByEmail"); n != 1 {
		t.Errorf("users.lookupByEmail called %d times for one person, want 1 (cached)", n)
	}

	gone := m
	gone.To, gone.Who, gone.Key = "dave@example.com", "the requester Dave", "deskbot:f=nudge/42/1.1/1"
	if err := h.slack.DM(h.ctx, gone); err != nil {
		t.Fatal(err)
	}
	post := lastIn(t, h.fake, oncallID)
	if want := "For the requester Dave (not sent directly: no Slack user has the e-mail dave@example.com): Ticket #42 is due in 30 minutes"; post.Text != want {
		t.Fatalf("fallback post %q, want %q", post.Text, want)
	}
	if found, err := h.slack.AlreadyDMed(h.ctx, gone); err != nil || !found {
		t.Fatalf("AlreadyDMed of the fallback post = %v, %v", found, err)
	}
	if err := h.slack.DM(h.ctx, gone); err != nil { // the miss is cached too
		t.Fatal(err)
	}
	if n := countCalls(h.fake, "users.lookupByEmail"); n != 2 {
		t.Errorf("users.lookupByEmail called %d times, want 2 (a miss is cached)", n)
	}

	nobody := m
	nobody.To, nobody.Who, nobody.Why, nobody.Key = "", "the assignee", "ticket #42 has no assignee", "deskbot:f=nudge/42/2.1/0"
	if err := h.slack.DM(h.ctx, nobody); err != nil {
		t.Fatal(err)
	}
	if post := lastIn(t, h.fake, oncallID); !strings.Contains(post.Text, "For the assignee (not sent directly: ticket #42 has no assignee)") {
		t.Fatalf("fallback post %q", post.Text)
	}
	ghost := m
	ghost.To, ghost.Who, ghost.Key = "UGHOST", "UGHOST", "deskbot:f=nudge/42/3.1/0"
	if err := h.slack.DM(h.ctx, ghost); err != nil {
		t.Fatal(err)
	}
	if post := lastIn(t, h.fake, oncallID); !strings.Contains(post.Text, "For UGHOST (not sent directly: Slack would not open a direct message with UGHOST (user_not_found))") {
		t.Fatalf("fallback post for an unknown user id %q", post.Text)
	}
	if found, err := h.slack.AlreadyDMed(h.ctx, ghost); err != nil || !found {
		t.Fatalf("AlreadyDMed of the unknown user's fallback post = %v, %v", found, err)
	}
	if err := h.slack.DM(h.ctx, chat.DMMessage{To: "bob@example.com", Key: "k"}); err == nil {
		t.Error("a direct message without ticket was sent")
	}
}

// lastIn is the last message posted to channel.
func lastIn(t *testing.T, fake *slackfake.Server, channel string) slackfake.Message {
	t.Helper()
	var last *slackfake.Message
	for _, m := range fake.Messages() {
		if m.Channel == channel && m.Method == "chat.postMessage" {
			last = &m
		}
	}
	if last == nil {
		t.Fatalf("nothing posted to %s: %+v", channel, fake.Messages())
	}
	return *last
}

// countCalls counts the Web API calls of method.
func countCalls(fake *slackfake.Server, method string) int {
	n := 0
	for _, c := range fake.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}
