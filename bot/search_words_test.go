package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// The mirror tests' clock; the mirror's cursor is a minute behind it.
var mirrorNow, mirrorCursor = fakedesk.MirrorClock()

// wordsDesk is the simulator with 23 open tickets that mention "printer"
// (12 in the subject, 11 only in the description), 2 closed ones that do,
// and 12 urgent open tickets about other things; its mirror holds them
// all as the scheduler's sync would (description text included).
func wordsDesk(t *testing.T) (*sdsim.Server, Desk, *fakedesk.Mirror) {
	t.Helper()
	sim, c, _ := fakedesk.Sim(t) // its one ticket: "Printer on fire", urgent, open
	t0 := time.Now().UTC().Truncate(time.Second).Add(-48 * time.Hour)
	for i := range 22 {
		tk := sdsim.Ticket{Subject: fmt.Sprintf("Laser printer %d jams", i), Priority: 2, CreatedAt: t0.Add(time.Duration(i) * time.Minute)}
		if i%2 == 1 {
			tk.Subject = fmt.Sprintf("Office problem %d", i)
			tk.Description = "<p>The PRINTER on floor 2 jams.</p>"
		}
		sim.Desk.AddTicket(tk)
	}
	for i := range 2 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Old printer %d", i), Status: sdclient.StatusClosed})
	}
	for i := range 11 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("VPN down %d", i), Priority: 4, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	var put []*sdclient.Ticket
	for _, id := range sim.Desk.TicketIDs() {
		tk, _, err := c.Tickets.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		tk.Description = "" // the mirror keeps the text only
		put = append(put, tk)
	}
	m := fakedesk.OpenMirror(t)
	if _, err := m.MirrorApply(context.Background(), 0, put, nil, store.MirrorState{Cursor: mirrorCursor, Complete: true}); err != nil {
		t.Fatal(err)
	}
	return sim, NewDeskAdapter(c), m
}

// Issue 17, 6: /ticket search with plain words searches subject and
// description of the open tickets (the desk's filter cannot: it is
// answered from deskbot's mirror, saying so), says how many matched and
// pages past the first 10.
func TestSearchPlainWordsPages(t *testing.T) {
	_, desk, m := wordsDesk(t)
	r := newTestRouter(t, desk, WithMirror(m), WithClock(func() time.Time { return mirrorNow }))

	p1 := handle(r, "UALICE", "/ticket", "search printer")
	if p1.Failed || p1.Card == nil {
		t.Fatalf("search printer: %+v", p1)
	}
	if want := "Open tickets with printer in subject or description: 23"; p1.Card.Title != want {
		t.Errorf("title %q, want %q", p1.Card.Title, want)
	}
	if len(p1.Card.Lines) != 10 {
		t.Errorf("page 1 lists %d tickets:\n%s", len(p1.Card.Lines), p1.Card.Text())
	}
	for _, want := range []string{"showing 1–10 of 23; next: /ticket search printer page 2", "searched deskbot's mirror of the open tickets (the desk cannot search words), as of 09:41:12 UTC"} {
		if !strings.Contains(p1.Card.Text(), want) {
			t.Errorf("page 1 lacks %q:\n%s", want, p1.Card.Text())
		}
	}
	p2 := handle(r, "UALICE", "/ticket", "search printer page 2")
	p3 := handle(r, "UALICE", "/ticket", "search Printer PAGE 3")
	if p2.Failed || p3.Failed {
		t.Fatalf("pages 2, 3: %+v %+v", p2, p3)
	}
	if !strings.Contains(p2.Card.Text(), "showing 11–20 of 23; next: /ticket search printer page 3") || len(p2.Card.Lines) != 10 {
		t.Errorf("page 2:\n%s", p2.Card.Text())
	}
	if !strings.Contains(p3.Card.Text(), "showing 21–23 of 23") || len(p3.Card.Lines) != 3 || strings.Contains(p3.Card.Text(), "next:") {
		t.Errorf("page 3:\n%s", p3.Card.Text())
	}
	seen := map[string]bool{}
	for _, p := range []Reply{p1, p2, p3} {
		for _, l := range p.Card.Lines {
			id, _, _ := strings.Cut(l, " ")
			if seen[id] {
				t.Errorf("%s listed twice", id)
			}
			seen[id] = true
			if strings.Contains(l, "Old printer") || strings.Contains(l, "VPN") {
				t.Errorf("listed %q", l)
			}
		}
	}
	if r := handle(r, "UALICE", "/ticket", "search printer page 4"); !r.Failed || !strings.Contains(r.Text, "23, so there is no page 4") {
		t.Errorf("page 4: %+v", r)
	}
	if r := handle(r, "UALICE", "/ticket", "search printer page 0"); !r.Failed || !strings.Contains(r.Text, `"0" is not a page number`) {
		t.Errorf("page 0: %+v", r)
	}
	// Two words: both somewhere in subject or description.
	if r := handle(r, "UALICE", "/ticket", "search printer floor"); r.Failed || r.Card.Title != "Open tickets with printer floor in subject or description: 11" {
		t.Errorf("two words: %+v", r)
	}
}

// Without a mirror the words cannot be searched: the answer says why and
// how to search by field.
func TestSearchPlainWordsWithoutMirror(t *testing.T) {
	_, desk, _ := wordsDesk(t)
	r := newTestRouter(t, desk)
	resp := handle(r, "UALICE", "/ticket", "search printer")
	for _, want := range []string{
		"the desk cannot search for words (its filter has no free-text field)",
		"deskbot keeps a mirror of the tickets only while rules are loaded, and none are",
		"Search with field:value terms joined by AND/OR, e.g. priority:4 AND agent_id:0",
	} {
		if !resp.Failed || !strings.Contains(resp.Text, want) {
			t.Errorf("answer %q lacks %q", resp.Text, want)
		}
	}
	if strings.Contains(resp.Text, "expected ':'") {
		t.Errorf("answer %q", resp.Text)
	}
}

// A filter expression pages at the desk.
func TestSearchFilterPages(t *testing.T) {
	_, desk, _ := wordsDesk(t)
	r := newTestRouter(t, desk)
	p2 := handle(r, "UALICE", "/ticket", "search priority:4 page 2")
	if p2.Failed || p2.Card == nil || p2.Card.Title != "Tickets matching priority:4: 12" || len(p2.Card.Lines) != 2 ||
		!strings.Contains(p2.Card.Text(), "showing 11–12 of 12") {
		t.Fatalf("page 2: %+v\n%s", p2, p2.Card.Text())
	}
	p1 := handle(r, "UALICE", "/ticket", "search priority:4")
	if !strings.Contains(p1.Card.Text(), "next: /ticket search priority:4 page 2") {
		t.Errorf("page 1:\n%s", p1.Card.Text())
	}
	if bad := handle(r, "UALICE", "/ticket", "search printer:"); !bad.Failed || !strings.Contains(bad.Text, "bad filter expression") || !strings.Contains(bad.Text, "field:value") {
		t.Errorf("bad filter: %q", bad.Text)
	}
}

// An agent of two workspaces, one of which deskbot does not mirror: the
// words are searched where the mirror can, and the answer names the other
// (issue 23, 6: by its name, not its id).
func TestSearchPlainWordsPartlyMirrored(t *testing.T) {
	sim, desk, m := wordsDesk(t)
	other := sim.Desk.AddWorkspace(sdsim.Workspace{Name: "HR"})
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Wanda", LastName: "Wide", Email: "wanda@example.com", WorkspaceIDs: []int64{sdsim.DefaultWorkspaceID, other.ID}})
	r := newTestRouter(t, desk, WithMirror(m), WithClock(func() time.Time { return mirrorNow }))
	resp := r.Dispatch(context.Background(), Caller{UserID: "UWANDA", Users: chattest.Users{"UWANDA": "wanda@example.com"}}, Command{Slash: "/ticket", Text: "search printer"})
	if resp.Failed || resp.Card == nil || !strings.HasSuffix(resp.Card.Title, ": 23") {
		t.Fatalf("answer %+v", resp)
	}
	// Issue 23, 6: by its name.
	if want := "as of 09:41:12 UTC; not searched: workspace HR: deskbot does not mirror it"; !strings.Contains(resp.Card.Text(), want) {
		t.Errorf("answer lacks %q:\n%s", want, resp.Card.Text())
	}
}
