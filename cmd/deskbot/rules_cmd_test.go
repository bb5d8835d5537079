package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// runRules runs deskbot in-process and returns its exit code and output;
// the state is a new file unless env names one.
func runRules(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if env["DESKBOT_STATE"] == "" {
		env["DESKBOT_STATE"] = filepath.Join(t.TempDir(), "state.db")
	}
	err := run(t.Context(), append([]string{"deskbot"}, args...), func(k string) string { return env[k] },
		strings.NewReader(""), &out, &errOut)
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
	default:
		code = 1
		errOut.WriteString(err.Error())
	}
	return code, out.String(), errOut.String()
}

const customFieldRules = `version: 1
rules:
  - name: hq-urgent
    query: "priority:4 AND location:'HQ'"
    actions: [{note: "HQ urgent"}]
`

// A query on a custom field: check and test learn the field from
// --custom-field (they are offline), rules why from the desk.
func TestRulesCustomFields(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, []byte(customFieldRules), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	if code, _, stderr := runRules(t, env, "rules", "check", file); code != 1 || !strings.Contains(stderr, `rule "hq-urgent": query:`) || !strings.Contains(stderr, "location") {
		t.Errorf("check without the field: exit %d, stderr %q; want 1 naming the rule and the field", code, stderr)
	}
	if code, stdout, stderr := runRules(t, env, "rules", "check", file, "--custom-field", "location:text"); code != 0 || !strings.Contains(stdout, "ok, 1 rule\n") {
		t.Errorf("check with --custom-field location:text: exit %d, %q %q", code, stdout, stderr)
	}
	if code, _, stderr := runRules(t, env, "rules", "check", file, "--custom-field", "location:colour"); code != 2 && code != 1 || !strings.Contains(stderr, `unknown kind "colour"`) {
		t.Errorf("check with a bad kind: exit %d, stderr %q", code, stderr)
	}

	sim := sdsim.NewServer()
	defer sim.Close()
	sim.Desk.AddCustomField(sdsim.CustomField{Name: "location", Kind: sdsim.FieldString})
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "HQ down", Priority: 4, CustomFields: map[string]any{"location": "HQ"}})
	desk := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey}
	code, stdout, stderr := runRules(t, desk, "rules", "why", file, "--ticket", fmt.Sprint(tk.ID))
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("rule hq-urgent on ticket #%d: FIRES", tk.ID)) {
		t.Errorf("rules why against a desk with the field: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// rules test fails when a rule fails on a ticket, so that CI notices.
func TestRulesTestFailsOnEvaluationErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	tickets := filepath.Join(dir, "tickets.json")
	os.WriteFile(file, []byte(`version: 1
rules:
  - name: seats
    query: "priority:4"
    if: "ticket.custom_fields.seats > 10"
    actions: [{note: "big"}]
`), 0o600)
	os.WriteFile(tickets, []byte(`[{"id": 1, "subject": "a", "priority": 4, "status": 2, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z", "custom_fields": {"seats": 20}},
 {"id": 2, "subject": "b", "priority": 4, "status": 2, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z", "custom_fields": {}}]`), 0o600)
	code, stdout, stderr := runRules(t, map[string]string{}, "rules", "test", file, "--tickets", tickets, "--now", "2025-03-10T10:00:00Z")
	if code != 1 || !strings.Contains(stderr, "1 rule evaluations failed") || !strings.Contains(stdout, "seats fires") {
		t.Errorf("rules test with a failing ticket: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// An ops address already in use stops start-up with one line naming the
// variable, before the desk is asked anything.
func TestHTTPAddrInUseBeforeTheDesk(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sim := sdsim.NewServer()
	defer sim.Close()
	env := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey,
		"DESKBOT_HTTP_ADDR": ln.Addr().String()}
	code, _, stderr := runRules(t, env, "run")
	if code == 0 || !strings.Contains(stderr, "DESKBOT_HTTP_ADDR: listen on "+ln.Addr().String()) {
		t.Errorf("exit %d, stderr %q; want a failure naming DESKBOT_HTTP_ADDR", code, stderr)
	}
	if n := len(sim.Desk.Requests()); n != 0 {
		t.Errorf("%d requests reached the desk before the address was checked", n)
	}
}
