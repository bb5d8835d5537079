package scheduler

import (
	"strconv"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// assigneeRules write to the assignee of every open ticket of priority 3.
const assigneeRules = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: nudge
    query: "status:open AND priority:3"
    actions: [{dm: {to: assignee, text: "#{{ ticket.id }} is high"}}]
`

// Without a DMSender (WithDMs) a dm: is posted as an alert to its
// channel, once, saying for whom it was; nobody is looked up on the desk.
// bot/follow's tests cover the direct messages themselves.
func TestDMWithoutSender(t *testing.T) {
	e := newEnv(t, assigneeRules)
	ag := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Andy", Email: "andy@example.com", Active: true})
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "high", Priority: 3, ResponderID: ag.ID}).ID
	e.runOnce()
	e.afterLeases(1)
	as := e.notif.forTicket(id)
	want := "For the assignee (this chat cannot send direct messages): #" + strconv.FormatInt(id, 10) + " is high"
	if len(as) != 1 || as[0].Channel != "#it-desk" || as[0].Text != want || !strings.HasPrefix(as[0].Key, "deskbot:f=nudge/") {
		t.Fatalf("alerts %+v; want one saying %q", as, want)
	}
	for _, r := range e.sim.Desk.Requests() {
		if strings.HasPrefix(r.Path, "/api/v2/agents/") {
			t.Errorf("the desk was asked %s", r.Path)
		}
	}
}
