package slackchat_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/sdclient"
)

// A digest is posted once, then updated in place through the real
// slack-go client (chat.update); a message deleted meanwhile is posted
// again. What people read: counts, what breaches with links, the oldest
// unassigned.
func TestDigestEndToEnd(t *testing.T) {
	h := newE2E(t, nil, nil)
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	due := at.Add(25 * time.Minute)
	m := chat.DigestMessage{Rule: "morning", Channel: "#it-oncall", At: at, Within: 4 * time.Hour, Total: 3,
		ByStatus: []chat.Count{{Name: "Open", N: 2}, {Name: "Pending", N: 1}}, ByPriority: []chat.Count{{Name: "Urgent", N: 3}},
		ByGroup:   []chat.Count{{Name: "Network <ops>", N: 3}},
		Breaching: []*sdclient.Ticket{{ID: 7, Subject: "VPN down", DueBy: &due}}, BreachingTotal: 1,
		Unassigned: []*sdclient.Ticket{{ID: 5, Subject: "Printer", CreatedAt: at.Add(-50 * time.Hour)}}, UnassignedTotal: 1}
	ref, err := h.slack.PostDigest(h.ctx, m, chat.DigestRef{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Channel != oncallID || ref.TS == "" {
		t.Fatalf("ref %+v", ref)
	}
	got := digestText(t, lastIn(t, h.fake, oncallID).Blocks)
	chattest.Contains(t, "digest", got,
		"*Desk digest (morning), Wed 25 Nov 08:00 UTC*",
		"3 open: Open 2, Pending 1",
		"By priority: Urgent 3",
		"By group: Network &lt;ops&gt; 3",
		"*Due within 4h: 1*",
		"• <https://desk.example.com/a/tickets/7|#7 VPN down> — due in 25m",
		"*Unassigned: 1, oldest first*",
		"• <https://desk.example.com/a/tickets/5|#5 Printer> — opened 50h ago",
	)
	m.Total, m.ByStatus = 2, []chat.Count{{Name: "Open", N: 2}}
	again, err := h.slack.PostDigest(h.ctx, m, ref)
	if err != nil {
		t.Fatal(err)
	}
	if again != ref {
		t.Errorf("update answered %+v, want the same message %+v", again, ref)
	}
	var updates, posts int
	for _, msg := range h.fake.Messages() {
		if msg.Channel == oncallID && msg.Method == "chat.update" {
			updates++
		}
		if msg.Channel == oncallID && msg.Method == "chat.postMessage" {
			posts++
		}
	}
	if updates != 1 || posts != 1 {
		t.Errorf("%d posts and %d updates, want 1 and 1", posts, updates)
	}
	if h := h.fake.History(oncallID); len(h) != 1 || !strings.Contains(string(h[0].Blocks), "2 open: Open 2") {
		t.Errorf("channel history %+v, want the one digest, updated", h)
	}
	gone, err := h.slack.PostDigest(h.ctx, m, chat.DigestRef{Channel: oncallID, TS: "1.999999"})
	if err != nil {
		t.Fatal(err)
	}
	if gone.TS == "" || gone.TS == ref.TS {
		t.Errorf("a deleted digest was not posted anew: %+v", gone)
	}
}

// digestText joins the mrkdwn texts of a message's blocks.
func digestText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var blocks []struct {
		Text     *struct{ Text string }  `json:"text"`
		Elements []struct{ Text string } `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text != nil {
			b.WriteString(bl.Text.Text + "\n")
		}
		for _, e := range bl.Elements {
			b.WriteString(e.Text + "\n")
		}
	}
	return b.String()
}
