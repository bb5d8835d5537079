package main

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// The deskbot binary, with its scheduler against sdsim and its Slack
// transport (the real slack-go client) against slackfake: a dm: reaches
// the assignee of a ticket due within 30 minutes in their direct messages
// (users.lookupByEmail, conversations.open); a digest is posted to the desk
// channel and its next run updates that message (chat.update).
func TestNudgeAndDigestOverSlack(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	id := sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN down in Zurich", Priority: 3, ResponderID: sdsim.DefaultAgentID,
		DueBy: time.Now().Add(20 * time.Minute)}).ID
	slack := agentSlack(t, sim)
	vars, _ := deskOn(t, sim.URL, `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: nudge
    query: status:open
    if: 'has_due(ticket) && ticket.due_by - now() < duration("30m")'
    every: 1s
    actions:
      - dm: {to: assignee, text: "#{{ ticket.id }} breaches within 30 minutes"}
  - name: digest
    every: 2s
    digest: {breaching_within: 1h}
`, "SLACK_BOT_TOKEN", slack.BotToken(), "SLACK_APP_TOKEN", slack.AppToken(),
		"DESKBOT_SLACK_API_URL", slack.APIURL())
	p := start(t, vars)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want := "#" + strconv.FormatInt(id, 10) + " breaches within 30 minutes"
	if _, err := slack.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.Channel == "DU0AGENT" && strings.Contains(m.Text, want)
	}); err != nil {
		t.Fatalf("the nudge never reached the assignee's DM: %v", err)
	}
	first, err := slack.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.Channel == "C0DESK" && m.Method == "chat.postMessage" && strings.Contains(string(m.Blocks), "Desk digest (digest)")
	})
	if err != nil {
		t.Fatalf("the digest was never posted: %v", err)
	}
	if !strings.Contains(string(first.Blocks), "VPN down in Zurich") {
		t.Errorf("the digest does not name the ticket due within the hour: %s", first.Blocks)
	}
	if _, err := slack.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.Channel == "C0DESK" && m.Method == "chat.update" && m.TS == first.TS
	}); err != nil {
		t.Fatalf("the digest's next run did not update the message: %v", err)
	}
	var dms, digests int
	for _, m := range slack.Messages() {
		if m.Channel == "DU0AGENT" && m.Method == "chat.postMessage" {
			dms++
		}
		if m.Channel == "C0DESK" && m.Method == "chat.postMessage" && strings.Contains(string(m.Blocks), "Desk digest") {
			digests++
		}
	}
	if dms != 1 || digests != 1 {
		t.Errorf("%d direct messages and %d digest posts, want 1 and 1 (the rest are updates)", dms, digests)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}
