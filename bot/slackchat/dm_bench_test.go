package slackchat_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/sdclient"
)

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
