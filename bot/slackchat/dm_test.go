package slackchat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/slackchat"
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

// BenchmarkDMSlackCalls sends rule direct messages to one person through
// slack-go against slackfake: Slack calls per message (users.lookupByEmail
// once, then cached; conversations.open and chat.postMessage each time).
func BenchmarkDMSlackCalls(b *testing.B) {
	h := newE2E(b, nil, nil)
	tk := &sdclient.Ticket{ID: 42, Subject: "Printer on fire"}
	calls0, i := len(h.fake.Calls()), 0
	for b.Loop() {
		i++
		m := chat.DMMessage{To: "bob@example.com", Who: "the assignee", Channel: "#it-oncall", Text: "due soon", Rule: "nudge",
			Key: fmt.Sprintf("deskbot:f=nudge/%d/1.1/0", i), Ticket: tk}
		if err := h.slack.DM(h.ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(h.fake.Calls())-calls0)/float64(i), "slack-calls/dm")
	b.ReportMetric(float64(countCalls(h.fake, "users.lookupByEmail"))/float64(i), "lookups/dm")
}

// BenchmarkDigestSlackCalls posts a digest once and updates it at every
// further run: Slack calls per run.
func BenchmarkDigestSlackCalls(b *testing.B) {
	h := newE2E(b, nil, nil)
	m := chat.DigestMessage{Rule: "morning", Channel: "#it-oncall", At: time.Now(), Within: 4 * time.Hour, Total: 1,
		ByStatus: []chat.Count{{Name: "Open", N: 1}}}
	calls0, runs := len(h.fake.Calls()), 0
	var ref chat.DigestRef
	for b.Loop() {
		runs++
		r, err := h.slack.PostDigest(h.ctx, m, ref)
		if err != nil {
			b.Fatal(err)
		}
		ref = r
	}
	b.ReportMetric(float64(len(h.fake.Calls())-calls0)/float64(runs), "slack-calls/digest")
}

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
		if got := slackchat.GroupLine(chat.AlertMessage{Ticket: tk, Text: tc.text}, "L"); got != tc.want {
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
