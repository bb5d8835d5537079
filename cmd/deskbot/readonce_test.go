package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestStartReadsEachDeskResourceOnce: a start against a desk reads the
// ticket form's fields and the API key's agent once each, shared by the
// rules, the scheduler and the chat, counted at the desk; with the console
// and with Slack.
func TestStartReadsEachDeskResourceOnce(t *testing.T) {
	const rulesYAML = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: urgent
    query: "status:open AND priority:4"
    every: 1m
    actions: [{alert: {channel: desk, text: "Urgent #{{ ticket.id }}"}}]
`
	for _, slack := range []bool{false, true} {
		name := map[bool]string{false: "console", true: "slack"}[slack]
		t.Run(name, func(t *testing.T) {
			sim := sdsim.NewServer(sdsim.WithGenerated(1, 60))
			defer sim.Close()
			var extra []string
			var fake *slackfake.Server
			if slack {
				fake = agentSlack(t, sim)
				extra = []string{"SLACK_BOT_TOKEN", fake.BotToken(), "SLACK_APP_TOKEN", fake.AppToken(), "DESKBOT_SLACK_API_URL", fake.APIURL()}
			}
			env, _ := deskOn(t, sim.URL, rulesYAML, extra...)
			p := start(t, env)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			if fake != nil {
				if err := fake.WaitConnected(ctx, 1); err != nil {
					t.Fatalf("deskbot never connected to Slack: %v\n%s", err, p.stderr)
				}
			}
			// Started: the change feed follows the first full sync.
			if _, err := sim.Desk.AwaitRequests(ctx, func(rs []sdsim.Request) bool {
				return slices.ContainsFunc(rs, func(r sdsim.Request) bool { return r.Path == "/api/v2/tickets" })
			}); err != nil {
				t.Fatalf("no change feed request within a minute: %v\n%s", err, p.stderr)
			}
			time.Sleep(time.Second) // anything else of the start
			count := map[string]int{}
			for _, r := range sim.Desk.Requests() {
				count[r.Method+" "+r.Path]++
			}
			for _, path := range []string{"GET /api/v2/ticket_form_fields", "GET /api/v2/agents/me"} {
				if count[path] != 1 {
					t.Errorf("%s read %d times at start-up, want once", path, count[path])
				}
			}
			t.Logf("start-up requests: %v", count)
		})
	}
}
