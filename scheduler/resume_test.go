package scheduler

import (
	"fmt"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// assignThenNote's first action moves the ticket out of its own query.
const assignThenNote = `version: 1
rules:
  - name: route
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - set: {responder_id: %d, tags: [routed]}
      - note: "Routed to the first line."
`

// TestFiringMovedOutOfItsQueryStillFinishes: a firing whose first action
// (an assignment) takes the ticket out of the rule's query, and which then
// stops (the assignment's answer is lost, or the note meets a 5xx), finishes
// on resume: the assignment is not sent again (its values hold) and the
// note is written exactly once, in the same episode.
func TestFiringMovedOutOfItsQueryStillFinishes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(id int64) sdsim.Fault
		puts  int
	}{
		{"the assignment's answer is lost", func(id int64) sdsim.Fault {
			return sdsim.Fault{Kind: sdsim.FaultDropAfter, Count: 2, Method: "PUT", PathPrefix: fmt.Sprintf("/api/v2/tickets/%d", id)} // every attempt
		}, 2},
		{"the note meets a 5xx", func(id int64) sdsim.Fault {
			return sdsim.Fault{Kind: sdsim.FaultServerError, Count: 2, Method: "POST", PathPrefix: fmt.Sprintf("/api/v2/tickets/%d/notes", id)}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fmt.Sprintf(assignThenNote, sdsim.DefaultAgentID))
			agent := sdsim.DefaultAgentID
			id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4}).ID
			e.sim.Desk.InjectFault(tc.fault(id))
			if res := e.runOnce(); res[0].Fired != 0 {
				t.Fatalf("first cycle fired %d; want the firing cut short", res[0].Fired)
			}
			if tk, _ := e.sim.Desk.Ticket(id); tk.ResponderID != agent {
				t.Fatalf("ticket assigned to %d, want %d: the assignment reached the desk", tk.ResponderID, agent)
			}
			ended, fired := 0, 0
			for range 4 {
				e.clk.Advance(DefaultLease)
				res := e.runOnce()
				ended += res[0].Ended
				fired += res[0].Fired
			}
			if n := len(e.notesWith(id, "Routed to the first line.")); n != 1 {
				t.Errorf("%d notes, want exactly 1: the firing must finish although the ticket left the query", n)
			}
			puts := 0
			for _, r := range e.sim.Desk.Requests() {
				if r.Method == "PUT" && r.Path == fmt.Sprintf("/api/v2/tickets/%d", id) {
					puts++
				}
			}
			if puts != tc.puts {
				t.Errorf("%d updates sent, want %d: an update whose values hold is not sent again", puts, tc.puts)
			}
			if fired != 1 || ended != 1 {
				t.Errorf("fired %d, ended %d over the later cycles; want the firing finished, then its episode ended", fired, ended)
			}
		})
	}
}

// TestIdenticalNoteOfAnotherRuleHidesNoLostNote: on a desk that strips
// HTML comments, two rules write the same note text on one ticket. The
// first one's note never reaches the desk (the connection drops before it
// is applied); when it resumes, the second rule's identical note must not
// pass for it: each note carries its firing's invisible tag.
func TestIdenticalNoteOfAnotherRuleHidesNoLostNote(t *testing.T) {
	e := newEnvSim(t, []sdsim.Option{sdsim.WithHTMLCommentsStripped()}, `version: 1
rules:
  - name: first
    query: "priority:4"
    actions: [{note: "Escalated."}]
  - name: second
    query: "priority:4"
    actions: [{note: "Escalated."}]
`)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4}).ID
	e.noteFault(id, sdsim.FaultDrop, 1)
	if res := e.runOnce(); res[0].Fired != 1 {
		t.Fatalf("first cycle fired %d, want only the second rule", res[0].Fired)
	}
	if n := len(e.notesWith(id, "Escalated.")); n != 1 {
		t.Fatalf("%d notes after the drop, want the second rule's only", n)
	}
	e.afterLeases(2)
	if n := len(e.notesWith(id, "Escalated.")); n != 2 {
		t.Errorf("%d notes, want 2: the first rule's lost note must be written on resume", n)
	}
}
