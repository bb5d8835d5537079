package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

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
