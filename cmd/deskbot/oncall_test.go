package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestOnCallPagesOnConsole runs the binary with an oncall: section and the
// console chat: the rule pages, /oncall answers, /oncall ack N stops the
// page and notes it on the ticket, /metrics shows it, and a reload with an
// unknown policy keeps the old rules.
func TestOnCallPagesOnConsole(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Core switch down", Priority: 4})
	httpAddr := freeAddr(t)
	oncallRules := readFile(t, "testdata/oncall_rules.yaml")
	env, _ := deskOn(t, sim.URL, oncallRules, "DESKBOT_HTTP_ADDR", httpAddr)
	rulesFile := env["DESKBOT_RULES"]
	p := start(t, env)
	waitFor(t, "the page on the console", p.stdout,
		regexp.MustCompile(fmt.Sprintf(`PAGE #it-oncall: paged alice@example.com \(on call in it-primary\) \(level 1 of it-urgent\): urgent #%d`, tk.ID)), 30*time.Second)

	fmt.Fprintln(p.stdin, "/oncall")
	waitFor(t, "/oncall", p.stdout, regexp.MustCompile(`it-primary: alice@example.com until \w{3} \d{4}-\d\d-\d\d 09:00 CES?T, then alice@example.com`), 20*time.Second)
	fmt.Fprintf(p.stdin, "/oncall ack %d\n", tk.ID)
	waitFor(t, "/oncall ack", p.stdout, regexp.MustCompile(fmt.Sprintf(`Acknowledged the page of ticket #%d \(it-urgent\)`, tk.ID)), 20*time.Second)
	var note string
	for _, c := range sim.Desk.Conversations(tk.ID) {
		if c.Private && strings.Contains(c.Body, "On-call page acknowledged by") {
			note = c.Body
		}
	}
	if note == "" {
		t.Fatalf("no acknowledgement note on ticket %d: %+v", tk.ID, sim.Desk.Conversations(tk.ID))
	}

	metrics := get(t, "http://"+httpAddr+"/metrics")
	for _, want := range []string{
		`deskbot_oncall_pages_total{policy="it-urgent"} 1`,
		`deskbot_oncall_acks_total{policy="it-urgent"} 1`,
		`deskbot_oncall_time_to_ack_seconds_count{policy="it-urgent"} 1`,
		`deskbot_oncall_on_call{member="alice@example.com",override="false",schedule="it-primary"} 1`,
		`deskbot_scheduler_pages_total{outcome="started",rule="page-urgent"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A reload naming an unknown policy keeps the old rules.
	bad := strings.Replace(oncallRules, "{policy: it-urgent,", "{policy: it-urgnet,", 1)
	if err := os.WriteFile(rulesFile, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "reload error", p.stderr, regexp.MustCompile(`keeping the old rules.*rules\.yaml:21:24: rule \\?"page-urgent\\?": page: unknown escalation policy`), 20*time.Second)
	// The failed reload shows in /metrics and /readyz (degraded: the old
	// rules run on).
	if m := get(t, "http://"+httpAddr+"/metrics"); !strings.Contains(m, "\ndeskbot_rules_reload_failures_total 1\n") ||
		!strings.Contains(m, "\ndeskbot_rules_last_reload_success 0\n") {
		t.Errorf("/metrics does not show the failed reload")
	}
	if r := get(t, "http://"+httpAddr+"/readyz"); !regexp.MustCompile(`"rules":"degraded: last reload failed at \d\d:\d\d: [^"]*rules\.yaml:21:24: `).MatchString(r) {
		t.Errorf("/readyz = %s, want the rules check to say the last reload failed", r)
	}

	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}

// get returns the body of a GET of url.
func get(t *testing.T, url string) string {
	t.Helper()
	_, body := httpGetBody(t, url)
	return body
}

// readFile returns the text of the file at path, failing t.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
