package bot

import (
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// Issue 17, 6: /ticket show has the description (as text, trimmed), the
// type, the category and the tags the desk returns.
func TestShowHasDescriptionTypeCategoryTags(t *testing.T) {
	d, _ := newTroubledDesk(t)
	carol := d.sim.AddRequester(sdsim.Requester{FirstName: "Carol", LastName: "Requester", PrimaryEmail: "carol2@example.com"})
	long := strings.Repeat("It keeps jamming. ", 40)
	tk := d.sim.AddTicket(sdsim.Ticket{
		Subject: "Printer smokes", Priority: 3, RequesterID: carol.ID,
		Description: "<p>The printer on floor 3 is <b>smoking</b> &amp; beeping.</p><p>" + long + "</p>",
		Type:        "Incident", Category: "Hardware", SubCategory: "Printer",
		Tags: []string{"printer", "floor-3"},
	})
	r := deskRouter(t, d.url, nil)
	resp := handle(r, "UALICE", "/ticket", "show "+itoa(tk.ID))
	if resp.Failed || resp.Card == nil {
		t.Fatalf("show: %+v", resp)
	}
	text := resp.Card.Text()
	chattest.Contains(t, "card", text,
		"Type:               Incident",
		"Category:           Hardware › Printer",
		"Tags:               printer, floor-3",
		"• description: The printer on floor 3 is smoking & beeping. It keeps jamming.",
	)
	for _, l := range resp.Card.Lines {
		if d, ok := strings.CutPrefix(l, "description: "); ok {
			if n := len([]rune(d)); n > maxDescription || !strings.HasSuffix(d, "…") {
				t.Errorf("description of %d characters, not trimmed to %d: %q", n, maxDescription, d)
			}
		}
	}
}

// ruleNote is a note as the scheduler writes it: the text, the marker
// comment and the invisible tag of its firing.
const ruleNote = "deskbot paged the on-call at 2026-11-27T11:09:47Z.\n<!-- deskbot:f=page-urgent/1/1.1/1 -->" +
	"\u2060\u200c\u200b\u200c\u200b\u200c\u200c\u200c\u200c\u200c\u200c\u200c\u200c\u200c\u200c\u200c\u200b\u200b\u200c\u200b\u200c\u200c\u200b\u200c\u200b\u200c\u200c\u200c\u200b\u200c\u200c\u200c\u200b\u200c\u200c\u200c\u200b\u200b\u200c\u200b\u200b\u200c\u200c\u200c\u200b\u200b\u200b\u200c\u200c\u200c\u200b\u200c\u200c\u200c\u200b\u200c\u200c\u200c\u200c\u200b\u200c\u200c\u200c\u200c\u200b\u2060"

// Issue 23, 7: /ticket show quotes deskbot's own notes without their
// invisible marks, while zero width characters of other text stay.
func TestShowLeavesOutDeskbotMarks(t *testing.T) {
	d, _ := newTroubledDesk(t)
	tk := d.sim.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4, Description: "<p>می\u200cخواهم</p>"})
	if _, ok := d.sim.AddConversation(sdsim.Conversation{TicketID: tk.ID, Body: strings.ReplaceAll(ruleNote, "\n", "<br>"), Private: true, Source: 2}); !ok {
		t.Fatal("no conversation added")
	}
	r := deskRouter(t, d.url, nil)
	resp := handle(r, "UALICE", "/ticket", "show "+itoa(tk.ID))
	if resp.Failed || resp.Card == nil {
		t.Fatalf("show: %+v", resp)
	}
	text := resp.Card.Text()
	chattest.Contains(t, "card", text, "private note: deskbot paged the on-call at 2026-11-27T11:09:47Z.", "description: می\u200cخواهم")
	if strings.ContainsAny(text, "\u2060\u200b") || strings.Contains(text, "deskbot:f=") {
		t.Errorf("the card shows deskbot's marks: %q", text)
	}
	if got := chat.StripMarks("a\u200cb " + ruleNote); got != "a\u200cb deskbot paged the on-call at 2026-11-27T11:09:47Z.\n" {
		t.Errorf("StripMarks = %q", got)
	}
}
