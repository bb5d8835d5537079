package bot

import (
	"context"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"strings"
	"testing"
)

func TestConsolePostDryRun(t *testing.T) {
	r := newTestRouter(t, fakedesk.New())
	var out syncBuffer
	c, err := NewConsole(r, strings.NewReader(""), &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PostDryRun(context.Background(), "#it-desk", "deskbot dry run: would have:\n• fired x on #1"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "DRY RUN #it-desk: deskbot dry run: would have:\n• fired x on #1\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

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
