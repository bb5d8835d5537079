package slackchat_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestForgedAlertAckValueRefused (issue 27, item 6): erin may act only on
// the tickets assigned to her. On the alert card of her own ticket she
// presses Acknowledge with the button's value changed to name the firing
// of urgent ticket #1 (every part of it guessable). The click is refused:
// the page of #1 keeps escalating, no note is written on either ticket,
// no acknowledgement is recorded and no card changes.
func TestForgedAlertAckValueRefused(t *testing.T) {
	e := newPageEnv(t)
	erin := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Erin", LastName: "Agent", Email: "erin@example.com",
		Roles: []sdsim.AgentRole{{RoleID: 7, AssignmentScope: scopeAssigned}}})
	e.fake.AddUser(slackfake.User{ID: erinID, Name: "erin", Email: "erin@example.com"})
	own := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer jam", Priority: 1, ResponderID: erin.ID})
	e.poll()
	pageCard := e.lastCard()

	tk, err := e.desk.Ticket(e.ctx, own.ID)
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("deskbot:f=watch/%d/1.1/0", own.ID)
	if err := e.slack.Alert(e.ctx, bot.AlertMessage{Channel: "#it-oncall", Text: "Look", Ticket: tk, Rule: "watch", Key: key}); err != nil {
		t.Fatal(err)
	}
	alert, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), slackchat.MarkerBlockID(key))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	for _, forged := range []string{
		fmt.Sprintf("%d|page-urgent|deskbot:f=page-urgent/%d/1.1/0", own.ID, e.ticket),
		fmt.Sprintf("%d|watch|deskbot:f=page-urgent/%d/1.1/0", own.ID, e.ticket),
		fmt.Sprintf("%d|page-urgent|deskbot:f=page-urgent/%d/1.1/0", e.ticket, e.ticket), // her scope refuses #1
	} {
		before := e.press(erinID, alert, chat.ActionAcknowledge, forged)
		var answer slackfake.Message
		if err := e.fake.Wait(e.ctx, func() bool {
			for _, m := range e.fake.Messages()[before:] {
				if m.Method == "chat.postEphemeral" && m.User == erinID {
					answer = m
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("%s: no answer: %v", forged, err)
		}
		if !strings.Contains(answer.Text, "does not belong to an alert of ticket") && !strings.Contains(answer.Text, "you cannot act on ticket") {
			t.Errorf("%s answered %q", forged, answer.Text)
		}
		for _, m := range e.fake.Messages()[before:] {
			if m.Updated {
				t.Fatalf("%s changed a card: %+v", forged, m)
			}
		}
	}
	if p := e.page(); p.Stopped() || p.AckedBy != "" {
		t.Fatalf("the forged value stopped the page of #%d: %+v", e.ticket, p)
	}
	if n := e.notes(); len(n) != 0 {
		t.Fatalf("notes on #%d: %q", e.ticket, n)
	}
	for _, c := range e.sim.Desk.Conversations(own.ID) {
		t.Errorf("conversation on erin's ticket: %+v", c)
	}
	if got := e.acks.list(); len(got) != 0 {
		t.Fatalf("acknowledgements recorded: %q", got)
	}
	// The page still escalates at its next step, and its card is the one
	// posted before the clicks.
	if last := e.lastCard(); last.TS != pageCard.TS {
		t.Fatalf("page card changed: %+v", last)
	}
	e.tick(10 * time.Minute)
	if dm := e.dms("UBOB"); len(dm) != 1 {
		t.Fatalf("page did not escalate to bob: %d DMs", len(dm))
	}
}
