package slackchat_test

import (
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// Alert cards name the requester as /ticket show does, though the rules
// hand them the ticket without its requester embedded.
func TestAlertCardNamesRequester(t *testing.T) {
	_, desk, id := simDesk(t)
	h := newE2E(t, desk, nil)
	tk, err := desk.TicketBrief(h.ctx, id) // as the scheduler reads it
	if err != nil {
		t.Fatal(err)
	}
	if tk.Requester != nil {
		t.Fatalf("brief ticket has its requester: %+v", tk.Requester)
	}
	if err := h.slack.Alert(h.ctx, bot.AlertMessage{Channel: "#it-oncall", Text: "Urgent ticket unassigned", Ticket: tk, Rule: "page-urgent", Key: "names/1"}); err != nil {
		t.Fatal(err)
	}
	m, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postMessage" && strings.Contains(string(m.Blocks), slackchat.MarkerBlockID("names/1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	b := unescaped(m.Blocks)
	if !strings.Contains(b, `*Requester*\nCarol &lt;carol@example.com&gt;`) || strings.Contains(b, "requester #") {
		t.Fatalf("alert card does not name the requester: %s", b)
	}
}
