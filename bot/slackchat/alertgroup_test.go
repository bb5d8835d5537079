package slackchat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
)

// groupOf builds a grouped alert of n tickets numbered from first.
// TestSlackAlertGroup: a grouped alert is one top-level message naming
// every ticket (the first ten with their lines, the rest by number), with
// the rest's lines in its thread; AlreadyAlerted finds every member's key
// in the message itself (thread replies are not in the channel's
// history), and no other key.
func TestSlackAlertGroup(t *testing.T) {
	h := newE2E(t, nil, nil)
	g := chattest.AlertGroup(100, 47)
	if err := h.slack.AlertGroup(h.ctx, g); err != nil {
		t.Fatal(err)
	}
	var top []slackfake.Message
	var thread []slackfake.Message
	for _, m := range h.fake.Messages() {
		if m.Method != "chat.postMessage" {
			continue
		}
		if m.ThreadTS != "" && m.ThreadTS != m.TS {
			thread = append(thread, m)
		} else {
			top = append(top, m)
		}
	}
	if len(top) != 1 || top[0].Channel != oncallID {
		t.Fatalf("%d top-level messages, want 1 in the on-call channel", len(top))
	}
	blocks := texts(t, top[0].Blocks)
	if !strings.Contains(blocks, `<@UALICE> *overdue* — 47 tickets:`) {
		t.Errorf("headline missing or without the mention: %s", blocks)
	}
	for i, a := range g.Alerts {
		id := a.Ticket.ID
		link := fmt.Sprintf(`https://desk.example.com/a/tickets/%d|#%d`, id, id)
		if !strings.Contains(blocks, link) && !strings.Contains(blocks, fmt.Sprintf("#%d", id)) {
			t.Errorf("ticket #%d is not named in the message", id)
		}
		if i < slackchat.GroupPreview && !strings.Contains(blocks, "is overdue: Printer &lt;"+fmt.Sprint(id)+"&gt; &amp; co") {
			t.Errorf("ticket #%d's line is not in the message (escaped)", id)
		}
	}
	if !strings.Contains(blocks, "and 37 more, each with its line in the thread") {
		t.Errorf("the message does not say the rest is in the thread: %s", blocks)
	}
	if len(thread) != 2 || thread[0].ThreadTS != top[0].TS {
		t.Fatalf("%d thread replies, want 2 under the message", len(thread))
	}
	var rest strings.Builder
	for _, m := range thread {
		rest.WriteString(texts(t, m.Blocks))
	}
	for _, a := range g.Alerts[slackchat.GroupPreview:] {
		id := a.Ticket.ID
		if !strings.Contains(rest.String(), fmt.Sprintf("Ticket <https://desk.example.com/a/tickets/%d|#%d> is overdue: Printer &lt;%d&gt; &amp; co", id, id, id)) {
			t.Errorf("ticket #%d's line is not in the thread", id)
		}
	}
	for _, a := range g.Alerts {
		ok, err := h.slack.AlreadyAlerted(h.ctx, "#it-oncall", a.Key)
		if err != nil || !ok {
			t.Errorf("AlreadyAlerted(%s) = %v, %v; want true", a.Key, ok, err)
		}
	}
	for _, key := range []string{"deskbot:f=overdue/99/1.1/2", "deskbot:f=overdue/100/1.1/1"} {
		if ok, err := h.slack.AlreadyAlerted(h.ctx, "#it-oncall", key); err != nil || ok {
			t.Errorf("AlreadyAlerted(%s) = %v, %v; want false", key, ok, err)
		}
	}
}

// TestGroupBlocksWithinSlackLimits: every size of group renders within
// Block Kit's limits; more than groupMaxTickets take several messages.
func TestGroupBlocksWithinSlackLimits(t *testing.T) {
	link := func(id int64) string { return fmt.Sprintf("https://desk.example.com/a/tickets/%d", id) }
	for _, n := range []int{1, 10, 11, 24, 25, 47, slackchat.GroupMaxTickets} {
		g := chattest.AlertGroup(1000000, n)
		g.Alerts[0].Text = strings.Repeat("very long text <&> ", 400)
		v := slackchat.GroupBlocks(g, "<@UALICE>", link)
		checkBlockKit(t, fmt.Sprintf("group of %d", n), v.Blocks())
		for i, r := range v.Replies() {
			checkBlockKit(t, fmt.Sprintf("group of %d, reply %d", n, i), r)
		}
		raw, _ := json.Marshal(v.Blocks())
		for _, a := range g.Alerts {
			if !bytes.Contains(raw, []byte(slackchat.GroupToken(a.Key))) {
				t.Errorf("group of %d: the message does not carry #%d's key", n, a.Ticket.ID)
			}
			if !bytes.Contains(raw, []byte(fmt.Sprintf("|#%d", a.Ticket.ID))) {
				t.Errorf("group of %d: the message does not name #%d", n, a.Ticket.ID)
			}
		}
	}
}

func TestSlackAlertGroupOverTheMessageSize(t *testing.T) {
	h := newE2E(t, nil, nil)
	g := chattest.AlertGroup(1, slackchat.GroupMaxTickets+3)
	if err := h.slack.AlertGroup(h.ctx, g); err != nil {
		t.Fatal(err)
	}
	top := 0
	for _, m := range h.fake.Messages() {
		if m.Method == "chat.postMessage" && (m.ThreadTS == "" || m.ThreadTS == m.TS) {
			top++
		}
	}
	if top != 2 {
		t.Errorf("%d top-level messages for %d tickets, want 2", top, len(g.Alerts))
	}
	if ok, err := h.slack.AlreadyAlerted(h.ctx, "#it-oncall", g.Alerts[len(g.Alerts)-1].Key); err != nil || !ok {
		t.Errorf("AlreadyAlerted(last) = %v, %v", ok, err)
	}
}

func TestGroupLine(t *testing.T) {
	tk := &sdclient.Ticket{ID: 12, Subject: "VPN"}
	for _, tc := range []struct{ text, want string }{
		{"Ticket #12 is late: VPN", "Ticket <L|#12> is late: VPN"},
		{"Ticket #123 is late: VPN", "<L|#12> VPN — Ticket #123 is late: VPN"},
		{"Late", "<L|#12> VPN — Late"},
		{"", "<L|#12> VPN"},
	} {
		if got := slackchat.GroupLine(bot.AlertMessage{Ticket: tk, Text: tc.text}, "L"); got != tc.want {
			t.Errorf("groupLine(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// texts is every string of a message's blocks, one a line.
func texts(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + "\n")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return b.String()
}
