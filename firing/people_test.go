package firing

import (
	"context"
	"log/slog"
	"testing"

	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// namesRules read the names of a ticket's people, so a cycle looks them up.
const namesRules = `version: 1
rules:
  - name: names
    query: "priority:4"
    if: 'ticket.requester.name != "" || ticket.agent.name != "" || ticket.group.name != ""'
    actions: [{note: "x"}]
`

// Lookup names requesters, agents (also one who raised a ticket, whom
// /requesters does not know) and groups through the real client against
// the simulator, a few requests a cycle, each counted; an id the desk
// does not have stays unknown, and a fresh name is not asked again.
func TestPeopleLookup(t *testing.T) {
	sim := sdsim.NewServer()
	t.Cleanup(sim.Close)
	c := testkit.DeskClient(t, sim)
	d := sim.Desk
	g := d.AddGroup(sdsim.Group{Name: "Network"})
	ag := d.AddAgent(sdsim.Agent{FirstName: "Andy", LastName: "Agent", Email: "andy@example.com", Active: true})
	rq := d.AddRequester(sdsim.Requester{FirstName: "Rita", LastName: "Requester", PrimaryEmail: "rita@example.com", Active: true})
	set := testkit.Rules(t, namesRules)
	tickets := []*sdclient.Ticket{
		{ID: 1, RequesterID: rq.ID, ResponderID: &ag.ID, GroupID: &g.ID},
		{ID: 2, RequesterID: ag.ID}, // an agent raised it
		{ID: 3, RequesterID: 999999},
	}
	var p People
	counted := 0
	count := func(*sdclient.Response, error) { counted++ }
	log := slog.New(slog.DiscardHandler)
	for range 3 { // at most PeopleRequestsPerCycle look-ups a cycle
		p.Lookup(context.Background(), ClientDesk(c), count, set, tickets, t0, log)
	}
	if got, _ := p.Requester(rq.ID); got.Name != "Rita Requester" || got.Email != "rita@example.com" {
		t.Errorf("requester %+v", got)
	}
	if got, _ := p.Requester(ag.ID); got.Name != "Andy Agent" || got.Email != "andy@example.com" {
		t.Errorf("agent as requester %+v", got)
	}
	if got, _ := p.Agent(ag.ID); got.Name != "Andy Agent" {
		t.Errorf("agent %+v", got)
	}
	if got, ok := p.Group(g.ID); !ok || got.Name != "Network" {
		t.Errorf("group %+v, %v", got, ok)
	}
	if got, ok := p.Requester(999999); ok || got.Name != "" {
		t.Errorf("unknown requester %+v, %v: want unknown", got, ok)
	}
	sent := len(sim.Desk.Requests())
	if counted != sent || sent == 0 {
		t.Errorf("counted %d requests, the desk saw %d", counted, sent)
	}
	p.Lookup(context.Background(), ClientDesk(c), count, set, tickets, t0.Add(PeopleTTL/2), log)
	if n := len(sim.Desk.Requests()); n != sent {
		t.Errorf("fresh names asked again: %d more requests", n-sent)
	}
	p.Lookup(context.Background(), ClientDesk(c), count, set, tickets, t0.Add(PeopleTTL), log)
	// Each look-up is one request, or two when /requesters does not know
	// the id and /agents is asked.
	if n := len(sim.Desk.Requests()) - sent; n == 0 || n > 2*PeopleRequestsPerCycle {
		t.Errorf("stale names: %d requests, want 1 to %d", n, 2*PeopleRequestsPerCycle)
	}
}
