package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/chat"
)

// A dm: prints as a direct message to the person, or, when there is
// nobody to write to, as the fallback channel shows it; each once.
func TestConsoleDM(t *testing.T) {
	c, out, d := newConsole(t, strings.NewReader(""))
	ctx := context.Background()
	tk := d.Snapshot(42)
	m := chat.DMMessage{To: "bob@example.com", Who: "the assignee Bob Builder", Channel: "#it-desk", Text: "due in 30 minutes", Rule: "nudge", Key: "k1", Ticket: &tk}
	if ok, _ := c.AlreadyDMed(ctx, m); ok {
		t.Fatal("sent before any message")
	}
	if err := c.DM(ctx, m); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.AlreadyDMed(ctx, m); !ok {
		t.Error("AlreadyDMed false after DM")
	}
	none := chat.DMMessage{Who: "the assignee", Why: "ticket #42 has no assignee", Channel: "#it-desk", Text: "due soon", Rule: "nudge", Key: "k2", Ticket: &tk}
	if err := c.DM(ctx, none); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"DM bob@example.com: due in 30 minutes — ticket #42",
		"ALERT #it-desk: For the assignee (not sent directly: ticket #42 has no assignee): due soon — ticket #42",
		"(rule nudge)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if err := c.DM(ctx, chat.DMMessage{Key: "k3"}); err == nil {
		t.Error("a message without ticket was printed")
	}
}
