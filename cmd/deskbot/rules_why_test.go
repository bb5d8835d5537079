package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

const whyRules = `version: 1
rules:
  - name: urgent
    query: "priority:4"
    actions: [{note: "urgent"}]
`

// deskTicketReads are the ticket requests the desk got.
func deskTicketReads(sim *sdsim.Server) []string {
	var out []string
	for _, r := range sim.Desk.Requests() {
		if strings.Contains(r.Path, "/tickets") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

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
	if reads := deskTicketReads(sim); len(reads) != 0 {
		t.Errorf("mirrored ticket: the desk got ticket requests %v", reads)
	}

	sim.Desk.ResetRequests()
	code, stdout, stderr = runRules(t, env, "rules", "why", file, "--ticket", fmt.Sprint(other))
	_, stdout, _ = strings.Cut(stdout, "\n")
	if want := fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.\n", other); code != 0 || !strings.HasPrefix(stdout, want) ||
		!strings.Contains(stdout, `"Printer jam"`) {
		t.Errorf("ticket not mirrored: exit %d, want %q first\n%s\n%s", code, want, stdout, stderr)
	}
	if reads := deskTicketReads(sim); len(reads) != 1 {
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
}
