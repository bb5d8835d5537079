package scheduler

import (
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

const peopleRules = `version: 1
rules:
  - name: network
    query: "priority:4"
    if: 'ticket.group.name == "Network" && ticket.description_text contains "switch"'
    once: every 1m
    actions:
      - note: "For {{ ticket.requester.name }} <{{ ticket.requester.email }}>, agent {{ ticket.agent.name }} ({{ ticket.agent.email }}), group {{ ticket.group.name }}, unknown [{{ ticket.agent.name }}]"
`

// Rules see the names of a ticket's requester, agent and group, looked up
// on the desk a few a cycle and cached; unknown ones are "".
func TestRulesSeePeopleNames(t *testing.T) {
	e := newEnv(t, peopleRules)
	d := e.sim.Desk
	g := d.AddGroup(sdsim.Group{Name: "Network"})
	ag := d.AddAgent(sdsim.Agent{FirstName: "Andy", LastName: "Agent", Email: "andy@example.com", Active: true})
	rq := d.AddRequester(sdsim.Requester{FirstName: "Rita", LastName: "Requester", PrimaryEmail: "rita@example.com", Active: true})
	long := "the core switch is down " + strings.Repeat("x", 3000)
	assigned := d.AddTicket(sdsim.Ticket{Subject: "switch", Priority: 4, Description: long, RequesterID: rq.ID, ResponderID: ag.ID, GroupID: g.ID}).ID
	unassigned := d.AddTicket(sdsim.Ticket{Subject: "switch 2", Priority: 4, Description: "a switch", RequesterID: rq.ID, GroupID: g.ID}).ID
	other := d.AddTicket(sdsim.Ticket{Subject: "no group", Priority: 4, Description: "a switch", RequesterID: 999999}).ID

	lookups := func() int {
		n := 0
		for _, r := range d.Requests() {
			if strings.HasPrefix(r.Path, "/api/v2/requesters/") || strings.HasPrefix(r.Path, "/api/v2/agents/") || strings.HasPrefix(r.Path, "/api/v2/groups/") {
				n++
			}
		}
		return n
	}
	e.runOnce()
	if n := lookups(); n == 0 || n > peopleRequestsPerCycle {
		t.Fatalf("first cycle: %d look-ups, want 1 to %d", n, peopleRequestsPerCycle)
	}
	notes := e.notesWith(assigned, "For Rita Requester")
	if len(notes) != 1 || !strings.Contains(notes[0].Body, "agent Andy Agent (andy@example.com), group Network") {
		t.Fatalf("assigned ticket's notes: %+v", e.sim.Desk.Conversations(assigned))
	}
	if n := e.notesWith(unassigned, "agent  (), group Network, unknown []"); len(n) != 1 {
		t.Errorf("unassigned ticket's notes: %+v", e.sim.Desk.Conversations(unassigned))
	}
	if n := len(e.sim.Desk.Conversations(other)); n != 0 {
		t.Errorf("ticket without a group got %d notes", n)
	}
	// Cached: the next cycles ask nothing until the names are stale.
	before := lookups()
	e.next()
	if n := lookups(); n != before {
		t.Errorf("second cycle looked up %d names again", n-before)
	}
	e.clk.Advance(peopleTTL)
	e.runOnce()
	if n := lookups(); n == before || n-before > peopleRequestsPerCycle {
		t.Errorf("after %s: %d look-ups, want 1 to %d", peopleTTL, n-before, peopleRequestsPerCycle)
	}
}

// A rules file that reads no names looks none up.
func TestNoPeopleLookups(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: a
    query: "priority:4"
    actions: [{note: "{{ ticket.subject }}"}]
`)
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 4, RequesterID: 5, GroupID: 3})
	e.runOnce()
	for _, r := range e.sim.Desk.Requests() {
		if strings.HasPrefix(r.Path, "/api/v2/requesters/") || strings.HasPrefix(r.Path, "/api/v2/groups/") {
			t.Errorf("looked up %s", r.Path)
		}
	}
}
