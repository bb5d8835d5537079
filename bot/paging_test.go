package bot

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// Issue 23, 1 and 2: every list that counts more than it shows can be
// paged (unassigned, mine, search, /assign list), and no answer offers a
// page it cannot show: past the tickets the desk answers a search with
// (its first page of 30), the answer says how to narrow instead.
func TestListsPageWhatTheyCount(t *testing.T) {
	sim, c, _ := fakedesk.Sim(t) // Ada (the key's), Alice, Bob; "Printer on fire", unassigned
	var alice int64
	for _, a := range sim.Desk.Agents() {
		if a.Email == "alice@example.com" {
			alice = a.ID
		}
	}
	for i := range 17 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Unassigned %d", i), Priority: 1})
	}
	for i := range 12 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Alice's %d", i), Priority: 3, ResponderID: alice})
	}
	for i := range 45 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Medium %d", i), Priority: 2, ResponderID: alice})
	}
	for i := range 20 {
		sim.Desk.AddAgent(sdsim.Agent{FirstName: fmt.Sprintf("Zed%02d", i), Email: fmt.Sprintf("zed%02d@example.com", i)})
	}
	r := newTestRouter(t, NewDeskAdapter(c))

	tests := []struct {
		text  string
		slash string
		lines int
		want  []string // in the answer
		not   []string // never in it
	}{
		{"unassigned", "/ticket", 10, []string{"Open unassigned tickets: 18", "showing 1–10 of 18; next: /ticket unassigned page 2"}, nil},
		{"unassigned page 2", "/ticket", 8, []string{"showing 11–18 of 18"}, []string{"next:"}},
		{"mine page 2", "/ticket", 10, []string{"Your open tickets: 57", "showing 11–20 of 57; next: /ticket mine page 3"}, nil},
		{"mine page 3", "/ticket", 10, []string{"showing 21–30 of 57; the desk answers with its first 30 only: to see the others, narrow them with a search, e.g. /ticket search agent_id:"}, []string{"page 4"}},
		{"search priority:2 page 2", "/ticket", 10, []string{"Tickets matching priority:2: 45", "showing 11–20 of 45; next: /ticket search priority:2 page 3"}, nil},
		// The desk answers a search with one page of 30: page 3 is its
		// last, and says how to see the others rather than offer page 4.
		{"search priority:2 page 3", "/ticket", 10, []string{"showing 21–30 of 45; the desk answers with its first 30 only: to see the others, narrow the search with another term, e.g. /ticket search priority:2 AND group_id:N"}, []string{"page 4"}},
		{"list page 2", "/assign", 8, []string{"Agents to assign to: 23", "showing 16–23 of 23"}, []string{"next:"}},
		{"list", "/assign", 15, []string{"showing 1–15 of 23; next: /assign list page 2"}, nil},
		{"list zed page 2", "/assign", 5, []string{"Agents to assign to matching zed: 20", "showing 16–20 of 20"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.slash+" "+tc.text, func(t *testing.T) {
			rep := handle(r, "UALICE", tc.slash, tc.text)
			if rep.Failed || rep.Card == nil {
				t.Fatalf("%s %s: %+v", tc.slash, tc.text, rep)
			}
			text := rep.Card.Text()
			if len(rep.Card.Lines) != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", len(rep.Card.Lines), tc.lines, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("answer lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(text, w) {
					t.Errorf("answer has %q:\n%s", w, text)
				}
			}
		})
	}
	if rep := handle(r, "UALICE", "/ticket", "unassigned page 3"); !rep.Failed || !strings.Contains(rep.Text, "Open unassigned tickets: 18, so there is no page 3") {
		t.Errorf("unassigned page 3: %+v", rep)
	}
	if rep := handle(r, "UALICE", "/ticket", "unassigned please"); !rep.Failed || !strings.Contains(rep.Text, `unexpected "please"; usage: /ticket unassigned [page N]`) {
		t.Errorf("unassigned please: %+v", rep)
	}
}
