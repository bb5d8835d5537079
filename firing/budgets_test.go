package firing

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/rules"
)

// A rule over its run-time budget is reported to /readyz and the status
// pages, counted once a ticket and logged once a cycle; once it stays
// within its budget in a cycle it is forgotten.
func TestBudgets(t *testing.T) {
	set := testkit.Rules(t, testkit.NoteRules("heavy", "light"))
	over := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "over"}, []string{"rule"})
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	budget := fmt.Errorf("expression: %w", rules.ErrBudget)
	var b Budgets
	if err := b.Health(); err != nil {
		t.Fatalf("health before any cycle: %v", err)
	}
	b.Note(set.Rules(), []rules.Decision{{Rule: "heavy", TicketID: 7, Err: budget}, {Rule: "heavy", TicketID: 8, Err: budget},
		{Rule: "light", TicketID: 7}}, t0, over, log)
	err := b.Health()
	if err == nil || !strings.Contains(err.Error(), `rule "heavy" went over its run-time budget on 2 tickets (e.g. #7) at 09:00:00`) ||
		strings.Contains(err.Error(), "light") {
		t.Errorf("health: %v", err)
	}
	if o := b.Over(); len(o) != 1 || !strings.HasPrefix(o["heavy"], "over its run-time budget on 2 tickets (e.g. #7)") {
		t.Errorf("over: %v", o)
	}
	if n := counted(t, over.WithLabelValues("heavy")); n != 2 {
		t.Errorf("counted %v tickets, want 2", n)
	}
	if n := strings.Count(logs.String(), "went over its run-time budget"); n != 1 {
		t.Errorf("%d log lines, want 1:\n%s", n, logs.String())
	}
	b.Note(set.Rules()[1:], nil, t0, over, log) // heavy not due: remembered
	if b.Health() == nil {
		t.Error("a rule not due was forgotten")
	}
	b.Note(set.Rules(), nil, t0, over, log)
	if err := b.Health(); err != nil || len(b.Over()) != 0 {
		t.Errorf("after a cycle within budget: %v, %v", err, b.Over())
	}
}

// Page actions need an escalator; rules that page no one do not.
func TestCheckPages(t *testing.T) {
	set := testkit.Rules(t, `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: pager
    query: "priority:4"
    actions: [{page: {policy: p, text: "x"}}]
oncall:
  policies:
    - name: p
      levels: [{user: boss@example.com, after: 10m}]
`)
	if err := CheckPages(set, nil); err == nil || !strings.Contains(err.Error(), `rule "pager" pages on-call, but no escalator is configured`) {
		t.Errorf("without an escalator: %v", err)
	}
	if err := CheckPages(set, &fakeEscalator{}); err != nil {
		t.Errorf("with one: %v", err)
	}
	if err := CheckPages(testkit.Rules(t, testkit.NoteRules("quiet")), nil); err != nil {
		t.Errorf("rules without a page, without an escalator: %v", err)
	}
}
