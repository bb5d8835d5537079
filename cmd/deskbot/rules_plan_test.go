package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

const planRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: urgent
    query: "status:open AND agent_id:0 AND priority:4"
    group_over: 3
    max_firings_per_cycle: 5
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}: {{ ticket.subject }}"}
      - note: "Alerted the on-call."
  - name: low
    query: "priority:1"
    every: 5m
    actions:
      - alert: {channel: oncall, text: "Low #{{ ticket.id }}"}
`

// rules plan on a desk: matches, the first run grouped and capped, the
// drain and the requests; nothing is written to the desk or the state.
func TestRulesPlan(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	for i := range 8 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Outage %d", i), Priority: 4})
	}
	low := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mouse", Priority: 1})
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(file, []byte(planRules), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.db")
	env := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey, "DESKBOT_STATE": state}
	code, stdout, stderr := runRules(t, env, "rules", "plan", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"Desk " + sim.URL + " (DESKBOT_DESK_URL); nothing on it is changed.\n\nPlan for " + file + ": 2 rules on 9 tickets mirrored",
		"Cycles tick every 1m; at most 50 firings per cycle across rules (DESKBOT_MAX_FIRINGS_PER_CYCLE); no ledger yet",
		"\nrule urgent (every 1m, once: episode, group_over 3, max_firings_per_cycle 5)\n" +
			"  matches now: 8 tickets: #1, #2, #3, #4, #5, #6, #7, #8\n" +
			"  first run: fires on 5 now: 1 grouped message in #it-oncall naming 5 tickets, 5 private notes\n" +
			"  capped: 5 now, 3 in the next cycle; the backlog drains in 1m (2 cycles)\n" +
			"  desk requests: 2 a firing (1 re-read + 1 write): 16 for the first run\n",
		fmt.Sprintf("\nrule low (every 5m, once: episode, group_over 5, max_firings_per_cycle 20)\n"+
			"  matches now: 1 ticket: #%d\n"+
			"  first run: fires on 1 now: 1 alert in #it-oncall\n"+
			"  capped: no, all 1 fire in the first cycle\n", low.ID),
		"  change feed: 60 an hour (60 cycles an hour × 1 workspace",
		"  deleted and spam sweep: 12 an hour",
		"  first run: 17 requests for its firings over 2 cycles",
		"  backlog: every rule has fired on what matches now after 1m (2 cycles, a tick apart)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
	for _, r := range sim.Desk.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("plan sent the desk %s %s", r.Method, r.Path)
		}
	}
	if fileExists(state) {
		t.Errorf("plan created the state file %s", state)
	}
}

// On the embedded simulator the plan says so first; it defaults FILE to
// DESKBOT_RULES; bad usage prints the usage.
func TestRulesPlanEmbeddedAndUsage(t *testing.T) {
	example, err := filepath.Abs("../../rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runRules(t, map[string]string{"DESKBOT_RULES": example}, "rules", "plan")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if note := "NOTE: no DESKBOT_DESK_URL: this is deskbot's embedded simulator, a desk generated afresh for this command, not yours;"; !strings.HasPrefix(stdout, note) {
		t.Errorf("embedded simulator not said first:\n%s", stdout)
	}
	for _, want := range []string{"\nPlan for " + example + ": ", "\nrule page-urgent-unassigned (every 1m", "  matches now: ", "\nRequests (budget: 60 a minute", "  steady state: about "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}

	code, _, stderr = runRules(t, map[string]string{}, "rules", "plan", "a.yaml", "b.yaml")
	if code == 0 || !strings.Contains(stderr, "Usage: deskbot rules plan [FILE]") || !strings.Contains(stderr, `unexpected argument "b.yaml"`) {
		t.Errorf("two files: exit %d\n%s", code, stderr)
	}
	// --help: the usage on stdout (main exits 0 on flag.ErrHelp).
	_, stdout, _ = runRules(t, map[string]string{}, "rules", "plan", "--help")
	if !strings.Contains(stdout, "Usage: deskbot rules plan [FILE]") {
		t.Errorf("--help: no usage on stdout\n%s", stdout)
	}
}

// DESKBOT_DRY_RUN: the log says, one line per decision, what deskbot would
// have done, and the chat (here the console) gets one message a cycle
// saying the same; the desk gets no write.
func TestDryRunSaysWouldHaveInLogAndChat(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	for i := range 4 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Outage %d", i), Priority: 4})
	}
	env, _ := deskOn(t, sim.URL, strings.Replace(planRules, "group_over: 3", "group_over: 3\n    every: 1s", 1), "DESKBOT_DRY_RUN", "true")
	p := start(t, env)
	waitFor(t, "the log's would-have line", p.stderr, regexp.MustCompile(`dry run: would have posted one grouped message in #it-oncall naming 4 tickets`), 30*time.Second)
	waitFor(t, "the chat's would-have message", p.stdout, regexp.MustCompile(`DRY RUN #it-oncall: deskbot dry run \(DESKBOT_DRY_RUN\): this cycle changed nothing, but would have:\n• fired urgent on #1: name it in the grouped message in #it-oncall, then add the note`), 30*time.Second)
	for _, r := range sim.Desk.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("dry run sent the desk %s %s", r.Method, r.Path)
		}
	}
}
