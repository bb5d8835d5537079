package slackchat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot/internal/routertest"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// Issue 17, 6: /assign list [words] (and /ticket agents [words]) shows
// whom /assign can name: active agents by name and e-mail, and groups.
// maxAgentsShown is how many agents one answer lists (bot/commands.go).
const maxAgentsShown = 15

func TestAssignListAgents(t *testing.T) {
	sim, desk, _ := simDesk(t)
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Gone", LastName: "Away", Email: "gone@example.com", Occasional: true})
	for i := range 20 {
		sim.Desk.AddAgent(sdsim.Agent{FirstName: "Temp", LastName: fmt.Sprintf("Worker%02d", i), Email: fmt.Sprintf("temp%02d@example.com", i)})
	}
	sim.Desk.AddGroup(sdsim.Group{Name: "Hardware"})
	sim.Desk.AddGroup(sdsim.Group{Name: "Network"})
	r := routertest.New(t, desk)

	bob := routertest.Handle(r, "UALICE", "/assign", "list bob")
	if bob.Failed || bob.Card == nil {
		t.Fatalf("/assign list bob: %+v", bob)
	}
	if got := bob.Card.Text(); bob.Card.Title != "Agents to assign to matching bob: 1" || !strings.Contains(got, "• Bob Builder — bob@example.com") ||
		!strings.Contains(got, "assign with /assign N e-mail, /assign N @person or /assign N me") {
		t.Errorf("/assign list bob:\n%s", got)
	}
	if same := routertest.Handle(r, "UALICE", "/ticket", "agents BOB"); same.Card == nil || same.Card.Text() != bob.Card.Text() {
		t.Errorf("/ticket agents BOB differs from /assign list bob: %+v", same)
	}
	all := routertest.Handle(r, "UALICE", "/assign", "list")
	got := all.Card.Text()
	if !strings.Contains(got, "Groups:") || !strings.Contains(got, "Hardware, Network") || strings.Contains(got, "gone@example.com") ||
		len(all.Card.Lines) != maxAgentsShown || !strings.Contains(got, "more: add a word of the name or e-mail to narrow") {
		t.Errorf("/assign list:\n%s", got)
	}
	if net := routertest.Handle(r, "UALICE", "/assign", "list net"); net.Card.Title != "Agents to assign to matching net: 0" || !strings.Contains(net.Card.Text(), "Network") {
		t.Errorf("/assign list net:\n%s", net.Card.Text())
	}
	if h := routertest.Handle(r, "UALICE", "/ticket", "help"); !strings.Contains(h.Text, "/ticket agents [words]") || !strings.Contains(h.Text, "/assign list [words]") {
		t.Errorf("help lacks the agent list:\n%s", h.Text)
	}
	// Requesters may not list the desk's people.
	if c := routertest.Handle(r, "UCAROL", "/assign", "list"); !c.Failed || !strings.Contains(c.Text, "only desk agents") {
		t.Errorf("requester: %+v", c)
	}
}
