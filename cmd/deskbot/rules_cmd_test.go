package main

// The rules subcommands: check, test, plan and why.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
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
			"  capped: 5 now, 3 in the next cycle; the backlog drains in 1m (2 cycles, a tick apart)\n" +
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

// A cron rule's first run is at its next time, not now (issue 22): the
// plan says when, and evaluates the rule then; the rules that run now
// drain without it.
func TestRulesPlanCronFirstRunAtItsTime(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	sim.Desk.AddTicket(sdsim.Ticket{Subject: "waiting", Status: sdclient.StatusPending})
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	const y = `version: 1
rules:
  - name: remind
    query: "status:3"
    cron: "0 9 * * 1-5"
    actions: [{reply: "Still there?"}]
`
	if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	sched, err := cron.ParseStandard("0 9 * * 1-5")
	if err != nil {
		t.Fatal(err)
	}
	before := sched.Next(time.Now().UTC())
	env := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey, "DESKBOT_STATE": filepath.Join(dir, "state.db")}
	code, stdout, stderr := runRules(t, env, "rules", "plan", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	after := sched.Next(time.Now().UTC())
	ok := false
	for _, next := range []time.Time{before, after} {
		at := next.Format(time.RFC3339)
		ok = ok || strings.Contains(stdout, "\nrule remind (cron 0 9 * * 1-5, next at "+at+", once: episode") &&
			strings.Contains(stdout, "  first run: fires on 1 at "+at+", in ")
	}
	if !ok || strings.Contains(stdout, "fires on 1 now") {
		t.Errorf("plan does not say the cron rule first fires at %v:\n%s", before, stdout)
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

const whyRules = `version: 1
rules:
  - name: urgent
    query: "priority:4"
    actions: [{note: "urgent"}]
`

// With rules loaded, deskbot's chat answers /ticket unassigned, mine and
// why from the mirror its scheduler keeps, and the desk sees none of the
// ticket requests they used to send.
func TestChatAnswersFromTheMirror(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer on fire", Priority: 2})
	env, _ := deskOn(t, sim.URL, "version: 1\nrules:\n  - name: urgent\n    query: \"priority:4\"\n    every: 1s\n    actions: [{note: \"urgent\"}]\n")
	p := start(t, env)
	waitFor(t, "the first full sync", p.stderr, regexp.MustCompile(`full sync of the mirror complete`), 30*time.Second)
	fmt.Fprintln(p.stdin, "/ticket unassigned")
	waitFor(t, "/ticket unassigned", p.stdout, regexp.MustCompile(fmt.Sprintf(`(?s)Open unassigned tickets: 1\n.*#%d Open · Medium · unassigned — Printer on fire\n.*\(from deskbot's mirror, as of \d\d:\d\d:\d\d UTC\)`, tk.ID)), 20*time.Second)
	fmt.Fprintln(p.stdin, "/ticket mine")
	waitFor(t, "/ticket mine", p.stdout, regexp.MustCompile(`(?s)Your open tickets: 0\n.*\(from deskbot's mirror, as of \d\d:\d\d:\d\d UTC\)`), 20*time.Second)
	fmt.Fprintf(p.stdin, "/ticket why %d\n", tk.ID)
	waitFor(t, "/ticket why", p.stdout, regexp.MustCompile(fmt.Sprintf(`From deskbot's mirror, as of \d\d:\d\d:\d\d UTC \(change feed cursor\); the desk was not asked\.\nTicket #%d "Printer on fire"`, tk.ID)), 20*time.Second)
	for _, r := range sim.Desk.Requests() {
		if strings.Contains(r.RawQuery, "agent_id") || r.Path == fmt.Sprintf("/api/v2/tickets/%d", tk.ID) {
			t.Errorf("the chat sent the desk %s %s?%s", r.Method, r.Path, r.RawQuery)
		}
	}
}

// rules why reads the ticket from the mirror in DESKBOT_STATE and sends
// the desk no ticket request; a ticket the mirror does not hold, and a
// state without a mirror (the embedded simulator's fresh state), are read
// from the desk, and the answer says so.
func TestRulesWhyReadsTheMirror(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(file, []byte(whyRules), 0o600); err != nil {
		t.Fatal(err)
	}
	sim := sdsim.NewServer()
	defer sim.Close()
	mirrored := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	other := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer jam", Priority: 4}).ID

	// The state of a running deskbot whose scheduler mirrored the first
	// ticket a minute ago; the desk changed the ticket since.
	state := filepath.Join(dir, "state.db")
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := c.Tickets.Get(t.Context(), mirrored)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), state)
	if err != nil {
		t.Fatal(err)
	}
	cursor := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	if _, err := st.MirrorApply(t.Context(), 0, []*sdclient.Ticket{tk}, nil, store.MirrorState{Cursor: cursor, Complete: true, FullSyncAt: cursor}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	sim.Desk.UpdateTicket(mirrored, func(x *sdsim.Ticket) { x.Subject = "Mail down (desk copy)" })

	env := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey, "DESKBOT_STATE": state}
	sim.Desk.ResetRequests()
	code, stdout, stderr := runRules(t, env, "rules", "why", file, "--ticket", fmt.Sprint(mirrored))
	// First, the desk it asked.
	header, stdout, _ := strings.Cut(stdout, "\n")
	if want := "Desk " + sim.URL + "; ledger and mirror from DESKBOT_STATE."; header != want {
		t.Errorf("first line %q, want %q", header, want)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if code != 0 || !strings.HasPrefix(first, "From deskbot's mirror, as of ") ||
		!strings.HasSuffix(first, cursor.Format(time.TimeOnly)+" UTC (change feed cursor); the desk was not asked.") ||
		!strings.Contains(stdout, fmt.Sprintf(`Ticket #%d "Mail down"`, mirrored)) ||
		!strings.Contains(stdout, fmt.Sprintf("rule urgent on ticket #%d: FIRES", mirrored)) {
		t.Errorf("mirrored ticket: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if reads := sim.Desk.TicketRequests(); len(reads) != 0 {
		t.Errorf("mirrored ticket: the desk got ticket requests %v", reads)
	}

	sim.Desk.ResetRequests()
	code, stdout, stderr = runRules(t, env, "rules", "why", file, "--ticket", fmt.Sprint(other))
	_, stdout, _ = strings.Cut(stdout, "\n")
	if want := fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.\n", other); code != 0 || !strings.HasPrefix(stdout, want) ||
		!strings.Contains(stdout, `"Printer jam"`) {
		t.Errorf("ticket not mirrored: exit %d, want %q first\n%s\n%s", code, want, stdout, stderr)
	}
	if reads := sim.Desk.TicketRequests(); len(reads) != 1 {
		t.Errorf("ticket not mirrored: ticket requests %v, want the one read", reads)
	}

	// The embedded simulator and a fresh state: no mirror.
	code, stdout, stderr = runRules(t, map[string]string{}, "rules", "why", file, "--ticket", "1")
	if note := "NOTE: no DESKBOT_DESK_URL: this is deskbot's embedded simulator, a desk generated afresh for this command, not yours;"; !strings.HasPrefix(stdout, note) {
		t.Errorf("embedded simulator: not said loudly first:\n%s", stdout)
	}
	_, stdout, _ = strings.Cut(stdout, "\n\n")
	if want := "Read from the desk: the mirror is not built yet.\n"; code != 0 || !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, "Ticket #1 ") {
		t.Errorf("embedded simulator: exit %d, want %q first\n%s\n%s", code, want, stdout, stderr)
	}

	// Issue 23, 5: a ticket the embedded simulator lacks (one of a demo
	// running beside) still gets the note first, and the error says where
	// it looked.
	code, stdout, stderr = runRules(t, map[string]string{}, "rules", "why", file, "--ticket", "987654")
	if note := "NOTE: no DESKBOT_DESK_URL: this is deskbot's embedded simulator, a desk generated afresh for this command, not yours;"; code != 1 || !strings.HasPrefix(stdout, note) ||
		!strings.Contains(stderr, "(the embedded simulator's desk, see the NOTE above: for another desk, such as one of deskbot sim, set DESKBOT_DESK_URL and DESKBOT_DESK_API_KEY)") {
		t.Errorf("missing ticket on the embedded simulator: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// Issue 23, 10: rules check refuses codes no ticket can have, takes a
// desk's custom statuses with --status, and the commands that ask the
// desk check against the desk's own statuses.
func TestRulesCheckRefusesUnknownCodes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	src := "version: 1\nrules:\n  - name: vendor\n    query: \"priority:9 AND status:6\"\n    actions: [{note: \"waiting\"}]\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runRules(t, map[string]string{}, "rules", "check", file)
	for _, want := range []string{
		file + `:4:13: rule "vendor": query: priority:9: no ticket has priority 9; the known priorities are 1 (Low), 2 (Medium), 3 (High), 4 (Urgent)`,
		file + `:4:28: rule "vendor": query: status:6: no ticket has status 6; the known statuses are 2 (Open), 3 (Pending), 4 (Resolved), 5 (Closed); a custom status of your desk: rules check --status 6:NAME`,
	} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("check: exit %d, stdout %q\nstderr:\n%s\nwant %q", code, stdout, stderr, want)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Replace(src, "priority:9", "priority:4", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runRules(t, map[string]string{}, "rules", "check", file, "--status", "6:Awaiting vendor"); code != 0 || !strings.Contains(stdout, "ok, 1 rule") {
		t.Errorf("check --status 6:Awaiting vendor: exit %d, %q %q", code, stdout, stderr)
	}

	sim := sdsim.NewServer()
	defer sim.Close()
	sim.Desk.AddStatus(6, "Awaiting vendor")
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Vendor late", Priority: 4, Status: 6})
	desk := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey}
	if code, stdout, stderr := runRules(t, desk, "rules", "why", file, "--ticket", fmt.Sprint(tk.ID)); code != 0 || !strings.Contains(stdout, fmt.Sprintf("rule vendor on ticket #%d: FIRES", tk.ID)) {
		t.Errorf("rules why against a desk with status 6: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(src, "priority:9 AND status:6", "status:7", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runRules(t, desk, "rules", "why", file, "--ticket", fmt.Sprint(tk.ID)); code != 1 ||
		!strings.Contains(stderr, "status:7: no ticket has status 7; the desk's statuses are 2 (Open), 3 (Pending), 4 (Resolved), 5 (Closed), 6 (Awaiting vendor)") {
		t.Errorf("rules why, status 7 on a desk without it: exit %d\n%s", code, stderr)
	}
}

// Issue 23, 12: digest rules show in rules test, rules plan and rules why:
// when each runs next and what it would post (or, for one ticket, whether
// the digest counts it).
func TestDigestsInTestPlanAndWhy(t *testing.T) {
	example, err := filepath.Abs("../../rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tickets, err := filepath.Abs("../../rules/testdata/tickets.json")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runRules(t, map[string]string{}, "rules", "test", example, "--tickets", tickets, "--now", "2025-03-10T10:00:00Z")
	for _, want := range []string{
		"\ndigest morning-digest (cron 0 8 * * 1-5): next run 2025-03-11T08:00:00Z, it would post to #it-desk:\n  Desk digest (morning-digest), Tue 11 Mar 08:00 UTC\n  8 open: Open 5, Pending 2, status 6 1\n",
		"\n  Unassigned: 3, oldest first\n  • #107 Payroll system unreachable — opened 24h30m ago\n",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("rules test: exit %d, lacks %q\n%s\n%s", code, want, stdout, stderr)
		}
	}

	code, stdout, stderr = runRules(t, map[string]string{}, "rules", "plan", example)
	if code != 0 || !strings.Contains(stdout, "\ndigest morning-digest (cron 0 8 * * 1-5): next run ") || !strings.Contains(stdout, ", it would post to #it-desk:\n  Desk digest (morning-digest), ") {
		t.Errorf("rules plan: exit %d, no digest\n%s\n%s", code, stdout, stderr)
	}

	sim := sdsim.NewServer()
	defer sim.Close()
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN down", Priority: 2})
	desk := map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey}
	code, stdout, stderr = runRules(t, desk, "rules", "why", example, "--ticket", fmt.Sprint(tk.ID))
	if want := "\nDigests:\n  digest morning-digest (to #it-desk): counted among its open tickets, listed under the unassigned (each list shows its first 5); next run "; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("rules why: exit %d, lacks %q\n%s\n%s", code, want, stdout, stderr)
	}
}
