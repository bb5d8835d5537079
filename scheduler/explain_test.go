package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

const explainRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: page-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}"}
  - name: remind
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    once: every 30m
    actions:
      - note: "Still unassigned."
  - name: welcome
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    once: ticket
    actions:
      - reply: "We are on it."
`

// TestExplainerFollowsTheLedger: /ticket why and rules why say, for a live
// ticket, whether each rule holds and what the ledger says of its episode,
// through a firing, the end of the episode and the once: modes.
func TestExplainerFollowsTheLedger(t *testing.T) {
	e := newEnv(t, explainRules)
	set := mustRules(t, explainRules)
	ex := NewExplainer(ClientDesk(e.client), func() *rules.Set { return set }, e.st, e.clk.Now)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	explain := func() string {
		t.Helper()
		out, err := ex.Explain(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ts := func(d time.Duration) string { return t0.Add(d).UTC().Format(time.RFC3339) }
	wantLines := func(step, out string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(out, l) {
				t.Errorf("%s: explanation lacks %q:\n%s", step, l, out)
			}
		}
	}

	wantLines("before any poll", explain(),
		fmt.Sprintf("rule page-urgent on ticket #%d: FIRES", id),
		"  query holds: status:open AND agent_id:0 AND priority:4",
		"page-urgent: never fired; can fire on the next poll where it holds")

	e.runOnce()
	e.clk.Advance(time.Minute)
	wantLines("after firing", explain(),
		"page-urgent: episode 1 open, fired "+ts(0)+"; fires again only after a complete poll in which it no longer holds",
		"remind: episode 1 open, fired "+ts(0)+"; can fire again from "+ts(30*time.Minute),
		"welcome: episode 1 open, fired "+ts(0)+"; once: ticket, so it never fires again")

	e.assign(id, sdsim.DefaultAgentID)
	e.runOnce()
	wantLines("after assignment", explain(),
		fmt.Sprintf("rule page-urgent on ticket #%d: does not fire", id),
		"page-urgent: episode 1 ended "+ts(time.Minute)+", fired "+ts(0)+"; can fire again when it holds",
		"welcome: episode 1 ended "+ts(time.Minute)+", fired "+ts(0)+"; once: ticket, so it never fires again")

	if _, err := ex.Explain(t.Context(), 999999); !errors.Is(err, sdclient.ErrNotFound) || !strings.Contains(err.Error(), "ticket 999999 not found") {
		t.Errorf("unknown ticket: %v; want ticket 999999 not found, wrapping ErrNotFound", err)
	}
	noRules := NewExplainer(ClientDesk(e.client), func() *rules.Set { return nil }, e.st, nil)
	if out, err := noRules.Explain(t.Context(), id); err != nil || !strings.Contains(out, "No rules are loaded") {
		t.Errorf("without rules: %q, %v", out, err)
	}
	noLedger := NewExplainer(ClientDesk(e.client), func() *rules.Set { return set }, nil, nil)
	if out, err := noLedger.Explain(t.Context(), id); err != nil || strings.Contains(out, "Ledger:") || !strings.Contains(out, "rule page-urgent") {
		t.Errorf("without a ledger: %q, %v; want the rules and no ledger section", out, err)
	}
}

// ticketReads are the ticket requests the desk got.
func ticketReads(sim *sdsim.Server) []string {
	var out []string
	for _, r := range sim.Desk.Requests() {
		if strings.Contains(r.Path, "/tickets") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// TestExplainerReadsTheMirror: with the mirror the scheduler keeps, rules
// why reads the ticket from it at no desk request and says how fresh it
// is; it reads the desk, saying why, for a ticket the mirror does not
// hold, a mirror nobody keeps up to date, and a mirror not built yet.
func TestExplainerReadsTheMirror(t *testing.T) {
	e := newEnv(t, explainRules)
	set := mustRules(t, explainRules)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	e.runOnce() // the full sync builds the mirror; the cursor is the desk's clock less the overlap
	ex := NewExplainer(ClientDesk(e.client), func() *rules.Set { return set }, e.st, e.clk.Now, ExplainFromMirror(e.st))

	explain := func(step string, id int64, first string, reads int) string {
		t.Helper()
		e.sim.Desk.ResetRequests()
		out, err := ex.Explain(t.Context(), id)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got, _, _ := strings.Cut(out, "\n"); got != first {
			t.Errorf("%s: first line %q, want %q", step, got, first)
		}
		if !strings.Contains(out, fmt.Sprintf("Ticket #%d ", id)) || !strings.Contains(out, "Ledger:") {
			t.Errorf("%s: no explanation:\n%s", step, out)
		}
		if got := ticketReads(e.sim); len(got) != reads {
			t.Errorf("%s: ticket requests %v, want %d", step, got, reads)
		}
		return out
	}

	out := explain("in the mirror", id, "From deskbot's mirror, as of 08:59:30 UTC (change feed cursor); the desk was not asked.", 0)
	if !strings.Contains(out, fmt.Sprintf("rule page-urgent on ticket #%d: FIRES", id)) || !strings.Contains(out, `"Mail down"`) {
		t.Errorf("the mirrored ticket is not explained:\n%s", out)
	}

	later := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer jam", Priority: 4}).ID
	explain("not in the mirror", later, fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.", later), 1)

	e.clk.Advance(20 * time.Minute) // nobody syncs
	explain("mirror too old", id, "Read from the desk: deskbot's mirror is too old to trust (as of 08:59:30 UTC, more than 15 minutes ago).", 1)

	empty := openStore(t, ":memory:")
	ex = NewExplainer(ClientDesk(e.client), func() *rules.Set { return set }, e.st, e.clk.Now, ExplainFromMirror(empty))
	explain("no mirror yet", id, "Read from the desk: the mirror is not built yet.", 1)
}
