package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// ownWritesRules alerts on an urgent unassigned ticket, and polls once an
// hour: within the test, only deskbot's own writes can change its mirror.
const ownWritesRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: urgent-unassigned
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1h
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }} unassigned"}
`

// deskbot reads its own writes (issue 22, item 4): after alice presses
// Assign to me on the alert of an urgent ticket, her Home tab lists it as
// assigned to her and /ticket why says that the urgent rule no longer
// holds, both from deskbot's mirror, without reading the ticket at the
// desk and long before the change feed's next poll. Through the real
// wiring (run): slack-go against slackfake, sdclient against sdsim.
func TestOwnWritesShowAtOnce(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	carol := sim.Desk.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	at := time.Now().Add(-time.Hour)
	urgent := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Server room flooding", Priority: 4, RequesterID: carol.ID, CreatedAt: at, UpdatedAt: at})
	fake := aliceSlack(t)

	defer runInProcess(t, sim, fake, ownWritesRules)()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	alert, err := fake.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.Channel == "C0ONCALL" && m.Method == "chat.postMessage" && strings.Contains(m.Text, fmt.Sprintf("#%d", urgent.ID))
	})
	if err != nil {
		t.Fatalf("no alert for #%d: %v", urgent.ID, err)
	}
	press, err := fake.BlockAction(ctx, "UALICE", alert.Channel, alert.TS, chat.ActionAssignMe, fmt.Sprint(urgent.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := press.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.update" && m.TS == alert.TS && strings.Contains(string(m.Blocks)+m.Text, "Alice")
	}); err != nil {
		t.Fatalf("the alert was not updated with its new owner: %v", err)
	}
	sim.Desk.ResetRequests()

	// The Home tab.
	if _, err := fake.AppHomeOpened(ctx, "UALICE", "home"); err != nil {
		t.Fatal(err)
	}
	var home string
	if err := fake.Wait(ctx, func() bool {
		v, ok := fake.HomeView("UALICE")
		home = string(v.Raw)
		return ok && strings.Contains(home, "Assigned to you")
	}); err != nil {
		t.Fatalf("no Home tab published: %v", err)
	}
	if !strings.Contains(home, "*Assigned to you* (1)") || !strings.Contains(home, "Server room flooding") {
		t.Errorf("the Home tab does not list the ticket alice took as hers:\n%s", home)
	}
	if !strings.Contains(home, "mirror") {
		t.Errorf("the Home tab's lists were not read from deskbot's mirror:\n%s", home)
	}

	// /ticket why.
	why, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: fmt.Sprintf("why %d", urgent.ID), UserID: "UALICE", ChannelID: "C0ONCALL"})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := fake.WaitResponse(ctx, func(r slackfake.Response) bool { return r.EnvelopeID == why.ID })
	if err != nil {
		t.Fatalf("no answer to /ticket why: %v", err)
	}
	text := answer.Text + string(answer.Blocks)
	if !strings.Contains(text, "From deskbot's mirror") {
		t.Errorf("/ticket why did not read the mirror:\n%s", text)
	}
	if strings.Contains(text, "FIRES") || !strings.Contains(text, "does not fire") {
		t.Errorf("/ticket why still has the urgent rule fire on the ticket alice took:\n%s", text)
	}

	ticketPath := fmt.Sprintf("/api/v2/tickets/%d", urgent.ID)
	if i := slices.IndexFunc(sim.Desk.Requests(), func(r sdsim.Request) bool { return r.Path == ticketPath }); i >= 0 {
		t.Errorf("the Home tab or /ticket why read the ticket at the desk: %+v", sim.Desk.Requests()[i])
	}
}
