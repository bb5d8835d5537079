package slackchat_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
)

func TestSimEndToEnd(t *testing.T) {
	sim, desk, id := simDesk(t)
	h := newE2E(t, desk, nil)
	ids := func(s string) string { return strings.ReplaceAll(s, "N", itoa(id)) }

	r := h.slash("UCAROL", "/ticket", "new Keyboard sticks")
	if !strings.Contains(r.Text, "Created ticket #") || !strings.Contains(r.Text, "Keyboard sticks — https://desk.example.com/a/tickets/") {
		t.Fatalf("new: %q", r.Text)
	}
	r = h.slash("UALICE", "/ticket", ids("show N"))
	if got := all(r); !strings.Contains(got, "Printer on fire") || !strings.Contains(got, "Urgent") || !strings.Contains(got, "Carol") {
		t.Fatalf("show: %s", got)
	}
	r = h.slash("UALICE", "/ticket", ids("note N smoke is white now"))
	if !strings.Contains(r.Text, "Added a private note") {
		t.Fatalf("note: %q", r.Text)
	}
	convs := sim.Desk.Conversations(id)
	if len(convs) == 0 || !convs[len(convs)-1].Private || !strings.Contains(convs[len(convs)-1].Body, "smoke is white now") {
		t.Fatalf("note on the desk: %+v", convs)
	}
	r = h.slash("UALICE", "/assign", ids("N <@UBOB>"))
	if !strings.Contains(r.Text, "assigned to Bob Builder") {
		t.Fatalf("assign: %q", r.Text)
	}
	r = h.slash("UALICE", "/ticket", ids("status N pending"))
	if !strings.Contains(r.Text, "is now Pending") {
		t.Fatalf("status: %q", r.Text)
	}
	if tk, _ := sim.Desk.Ticket(id); tk.Status != 3 || tk.ResponderID == 0 {
		t.Fatalf("desk ticket %+v", tk)
	}
	r = h.slash("UALICE", "/ticket", "show 987654")
	if !strings.Contains(r.Text, "ticket 987654 not found") {
		t.Fatalf("not found: %q", r.Text)
	}
	r = h.slash("UCAROL", "/ticket", ids("show N"))
	if !strings.Contains(r.Text, "only desk agents") {
		t.Fatalf("requester: %q", r.Text)
	}
	r = h.slash("UALICE", "/ticket", "search priority:4")
	if !strings.Contains(all(r), "Printer on fire") {
		t.Fatalf("search: %s", all(r))
	}
}

func TestSimAlertResolve(t *testing.T) {
	sim, desk, id := simDesk(t)
	h := newE2E(t, desk, nil)
	m := h.alert(fmt.Sprintf("deskbot:f=page-urgent/%d/1.1/0", id), id)
	up := h.click("UALICE", m, chat.ActionResolve)
	if tk, _ := sim.Desk.Ticket(id); tk.Status != sdclient.StatusResolved {
		t.Fatalf("status %d after Resolve", tk.Status)
	}
	if !strings.Contains(string(up.Blocks), "Alice Agent resolved the ticket") {
		t.Fatalf("card %s", up.Blocks)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

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
	if err := h.slack.Alert(h.ctx, chat.AlertMessage{Channel: "#it-oncall", Text: "Urgent ticket unassigned", Ticket: tk, Rule: "page-urgent", Key: "names/1"}); err != nil {
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

// A note with "quotes" and 'apostrophes' reads back as typed: the note is
// written to the desk as HTML (html.EscapeString writes &#34; and &#39;)
// and the desk's body_text, which the ticket card shows, is plain text.
func TestNoteWithQuotesReadsBackPlainly(t *testing.T) {
	_, desk, id := simDesk(t)
	h := newE2E(t, desk, nil)
	note := `He said "reboot it" & it's <fine>`
	if r := h.slash("UALICE", "/ticket", "note "+itoa(id)+" "+note); !strings.Contains(r.Text, "Added a private note") {
		t.Fatalf("note: %q", r.Text)
	}
	got := all(h.slash("UALICE", "/ticket", "show "+itoa(id)))
	// The answer is Block Kit JSON: Slack's own escaping of & < > (once)
	// is all that may differ from what was typed.
	for _, bad := range []string{"&#34;", "&#39;", "&amp;amp;", `\u0026amp;amp;`, `\u0026#34;`, `\u0026#39;`} {
		if strings.Contains(got, bad) {
			t.Errorf("the note shows escaped twice (%s):\n%s", bad, got)
		}
	}
	for _, want := range []string{`He said \"reboot it\"`, `it's`} {
		if !strings.Contains(got, want) {
			t.Errorf("/ticket show lacks %q:\n%s", want, got)
		}
	}
}
