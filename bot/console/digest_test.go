package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/sdclient"
)

// The console prints a digest, and a later run of the day as its update.
func TestConsoleDigest(t *testing.T) {
	c, out, _ := newConsole(t, strings.NewReader(""))
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	m := chat.DigestMessage{Rule: "morning", Channel: "#it-desk", At: at, Within: 4 * time.Hour, Total: 1,
		ByStatus: []chat.Count{{Name: "Open", N: 1}}, ByPriority: []chat.Count{{Name: "High", N: 1}}, ByGroup: []chat.Count{{Name: "no group", N: 1}},
		Unassigned: []*sdclient.Ticket{{ID: 42, Subject: "Printer on fire", CreatedAt: at.Add(-3 * time.Hour)}}, UnassignedTotal: 1}
	ref, err := c.PostDigest(ctx, m, chat.DigestRef{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PostDigest(ctx, m, ref); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"DIGEST #it-desk: Desk digest (morning), Wed 25 Nov 08:00 UTC",
		"1 open: Open 1",
		"• #42 Printer on fire <https://desk.example.com/a/tickets/42> — opened 3h ago",
		"DIGEST #it-desk (update of today's digest 1):",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
