package bot

import (
	"strings"
	"testing"

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
