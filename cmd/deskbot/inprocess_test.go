package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// runInProcess starts deskbot as `deskbot run` wires it, in this process,
// over the desk simulator and the Slack fake with the rules given and a
// SQLite state file of its own; more, as variable and value pairs, set or
// override its environment. The returned stop ends it, reports run's
// error and, when tb failed, deskbot's log.
func runInProcess(tb testing.TB, sim *sdsim.Server, fake *slackfake.Server, rules string, more ...string) (stop func()) {
	tb.Helper()
	dir := tb.TempDir()
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o600); err != nil {
		tb.Fatal(err)
	}
	env := map[string]string{
		"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey,
		"SLACK_BOT_TOKEN": fake.BotToken(), "SLACK_APP_TOKEN": fake.AppToken(), "DESKBOT_SLACK_API_URL": fake.APIURL(),
		"DESKBOT_RULES": rulesFile, "DESKBOT_STATE": filepath.Join(dir, "state.db"),
		"DESKBOT_HTTP_ADDR": "127.0.0.1:0", "DESKBOT_LOG_LEVEL": "warn",
	}
	for i := 0; i+1 < len(more); i += 2 {
		env[more[i]] = more[i+1]
	}
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"deskbot"}, func(k string) string { return env[k] }, bytes.NewReader(nil), &bytes.Buffer{}, &stderr)
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("run: %v", err)
		}
		if tb.Failed() {
			tb.Logf("deskbot's log:\n%s", stderr.String())
		}
	}
}

// agentSlack is the Slack workspace of the tests that chat as the desk's
// own agent: sim's API-key agent as U0AGENT, found by its desk e-mail, and
// the desk channel #it-desk (C0DESK). It is closed when tb ends.
func agentSlack(tb testing.TB, sim *sdsim.Server) *slackfake.Server {
	me, _ := sim.Desk.Agent(sdsim.DefaultAgentID)
	fake := slackfake.New(
		slackfake.WithUsers(slackfake.User{ID: "U0AGENT", Name: "agent", Email: me.Email, TeamID: "T0001"}),
		slackfake.WithChannels(slackfake.Channel{ID: "C0DESK", Name: "it-desk"}),
	)
	tb.Cleanup(fake.Close)
	return fake
}

// aliceSlack is the Slack workspace of the tests that chat as Alice:
// alice@example.com as UALICE, and the on-call channel #it-oncall
// (C0ONCALL). It is closed when tb ends.
func aliceSlack(tb testing.TB) *slackfake.Server {
	fake := slackfake.New(slackfake.WithUsers(slackfake.User{ID: "UALICE", Name: "alice", Email: "alice@example.com"}),
		slackfake.WithChannels(slackfake.Channel{ID: "C0ONCALL", Name: "it-oncall"}))
	tb.Cleanup(fake.Close)
	return fake
}
