package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestRuleOverBudgetIsReportedOthersRun: a rule whose nested loops over
// the tags go over the run-time budget on a ticket with many tags fails on
// that ticket only; it is counted, reported by RuleHealth (/readyz), and
// the other rules act as usual. Within budget again, it is forgotten.
func TestRuleOverBudgetIsReportedOthersRun(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: nested
    query: "priority:4"
    if: 'any(ticket.tags, {any(ticket.tags, {# == "zz" + #})})'
    actions: [{note: "never"}]
  - name: plain
    query: "priority:4"
    actions: [{note: "plain"}]
`)
	tags := make([]string, 400) // 400 × 400 loop steps: over the 100,000 of a ticket
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	big := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "many tags", Priority: 4, Tags: tags}).ID
	small := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "few tags", Priority: 4, Tags: tags[:3]}).ID
	e.runOnce()
	for _, id := range []int64{big, small} {
		if n := len(e.notesWith(id, "plain")); n != 1 {
			t.Errorf("ticket %d: %d notes of the other rule, want 1", id, n)
		}
	}
	if got := metricValue(t, e.s.m.overBudget.WithLabelValues("nested")); got != 1 {
		t.Errorf("over-budget metric = %v, want 1 (one ticket)", got)
	}
	err := e.s.RuleHealth(t.Context())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`rule "nested" went over its run-time budget on 1 tickets (e.g. #%d)`, big)) {
		t.Errorf("RuleHealth = %v", err)
	}
	e.sim.Desk.UpdateTicket(big, func(x *sdsim.Ticket) { x.Tags = tags[:5] })
	e.next()
	if err := e.s.RuleHealth(t.Context()); err != nil {
		t.Errorf("RuleHealth after the ticket shrank = %v, want nil", err)
	}
}

// TestStopIsPromptDuringAnExpensiveEvaluation: a rule that costs a few
// milliseconds a ticket over thousands of tickets makes a long
// evaluation; cancelling the cycle's context (a shutdown) ends it within
// a chunk of tickets instead of after the whole mirror, and nothing of
// the half-evaluated cycle acts or ends an episode.
func TestStopIsPromptDuringAnExpensiveEvaluation(t *testing.T) {
	e := newEnv(t, urgentRules)
	for i := range 3000 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprint("t", i), Priority: 1 + i%2})
	}
	e.runOnce() // the full sync, with cheap rules
	slow := mustRules(t, `version: 1
rules:
  - name: slow
    query: "status:open"
    if: 'let xs = 1..315; !all(xs, {all(xs, {# > 0})})'
    actions: [{note: "never"}]
`)
	if err := e.s.Reload(slow); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	stop := time.AfterFunc(300*time.Millisecond, cancel)
	defer stop.Stop()
	started := time.Now()
	c := e.s.runCycle(ctx, scheduled)
	took := time.Since(started)
	if c.Skipped != "stopping" || len(c.Jobs) != 1 || c.Jobs[0].Complete || c.Jobs[0].Ended != 0 {
		t.Fatalf("cycle %+v, want it stopped while evaluating", c)
	}
	// The whole evaluation takes 3,000 × several ms; a chunk of 32 a
	// fraction of a second, even under the race detector.
	if took > 10*time.Second {
		t.Errorf("the cycle took %v to stop", took)
	}
}
