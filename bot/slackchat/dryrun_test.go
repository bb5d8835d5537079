package slackchat_test

import (
	"strings"
	"testing"
)

// In Slack the dry-run summary is one plain message: no blocks, no
// buttons, the mention not turned into a ping.
func TestSlackPostDryRun(t *testing.T) {
	h := newE2E(t, nil, nil)
	text := "deskbot dry run: would have:\n• fired urgent on #1: alert #it-oncall @it-oncall \"Urgent <b>\""
	if err := h.slack.PostDryRun(h.ctx, "#it-oncall", text); err != nil {
		t.Fatal(err)
	}
	msgs := h.fake.Messages()
	if len(msgs) != 1 || msgs[0].Method != "chat.postMessage" || msgs[0].Channel != oncallID || msgs[0].Blocks != nil {
		t.Fatalf("messages %+v, want one plain chat.postMessage to %s", msgs, oncallID)
	}
	if got := msgs[0].Text; !strings.Contains(got, "• fired urgent on #1") || strings.Contains(got, "<b>") || strings.Contains(got, "<!subteam") {
		t.Errorf("posted %q", got)
	}
}
