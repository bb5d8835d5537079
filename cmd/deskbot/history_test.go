package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

const historyRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: urgent
    query: "status:open AND priority:4"
    every: 1s
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}"}
`

// DESKBOT_HISTORY through the real wiring (run over sdsim and slackfake):
// by default the first full sync's starting state is recorded in the
// state store; a restart with DESKBOT_HISTORY=0 removes it.
func TestHistoryWiring(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	urgent := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Server room flooding", Priority: 4})
	fake := slackfake.New(slackfake.WithChannels(slackfake.Channel{ID: "C0ONCALL", Name: "it-oncall"}))
	defer fake.Close()
	// Both runs share one state file: the second must find what the first recorded.
	statePath := filepath.Join(t.TempDir(), "state.db")
	start := func(history string) (stop func()) {
		return runInProcess(t, sim, fake, historyRules, "DESKBOT_STATE", statePath, "DESKBOT_HISTORY", history)
	}
	st, err := store.Open(t.Context(), statePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recorded := func() map[int64]int {
		out := map[int64]int{}
		err := st.Scan(t.Context(), time.Time{}, time.Now().Add(time.Hour), func(r history.Record) error {
			out[r.Ticket.ID] = r.Ticket.Priority
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	waitFor := func(what string, cond func(map[int64]int) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := recorded()
			if cond(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the history holds %v", what, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	stop := start("") // the default, 720h
	waitFor("default retention", func(got map[int64]int) bool { return got[urgent.ID] == 4 })
	stop()
	if t.Failed() {
		return
	}
	stop = start("0")
	defer stop()
	waitFor("DESKBOT_HISTORY=0", func(got map[int64]int) bool { return len(got) == 0 })
}
