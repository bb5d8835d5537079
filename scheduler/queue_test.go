package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// backlogOrderRules is a routine rule first in the file and the urgent
// one last, as a rules file grows.
const backlogOrderRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: routine
    query: "status:open AND priority:1"
    actions: [{note: "routine check"}]
  - name: urgent
    query: "status:open AND priority:4 AND agent_id:0"
    actions: [{alert: {channel: oncall, text: "Urgent #{{ ticket.id }}"}}]
`

// TestUrgentGoesFirstWhenTheCapBinds: with more firings than the cap
// across rules, the urgent alert on the newest ticket, of the last rule
// in the file, is admitted first; the routine work behind it is held back
// by the cap and says so.
func TestUrgentGoesFirstWhenTheCapBinds(t *testing.T) {
	e := newEnv(t, backlogOrderRules, WithMaxFiringsPerCycle(5))
	var routine []int64
	for i := range 8 {
		routine = append(routine, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprint("r", i), Priority: 1, ResponderID: sdsim.DefaultAgentID}).ID)
	}
	urgent := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "mail down", Priority: 4}).ID
	e.runOnce()
	if n := len(e.notif.forTicket(urgent)); n != 1 {
		t.Fatalf("%d alerts on the urgent ticket #%d in the first cycle, want 1", n, urgent)
	}
	noted := 0
	for _, id := range routine {
		noted += len(e.notesWith(id, "routine check"))
	}
	if noted != 4 {
		t.Errorf("%d routine notes in the first cycle, want the 4 the cap leaves", noted)
	}
	h, ok := e.s.Memory().Held.HeldBack(rules.FiringKey{Rule: "routine", TicketID: routine[7]})
	if !ok || h.Cap != plan.CapCycle || h.Limit != 5 {
		t.Errorf("HeldBack(routine #%d) = %+v %v, want the cap of 5 across rules", routine[7], h, ok)
	}
}

// TestQueuedWhenTheCycleRunsOutOfBudget: a scheduled cycle starts no
// firing that would wait for the background budget past its next tick;
// the rest waits in the queue, counted as deferred (not failed), and
// /ticket why says it is queued, not capped. The next cycles drain it.
func TestQueuedWhenTheCycleRunsOutOfBudget(t *testing.T) {
	e := newEnv(t, backlogOrderRules, WithBudget(6))
	e.runOnce() // the full sync, before the tickets come
	var ids []int64
	for i := range 10 {
		ids = append(ids, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprint("r", i), Priority: 1, ResponderID: sdsim.DefaultAgentID}).ID)
	}
	at := t0.Add(time.Minute)
	e.clk.Advance(time.Minute)
	// The feed (1 request), then per ticket a re-read and a note: two
	// tickets fit 6 requests a minute, with one left for the next sync.
	c := e.s.runCycle(t.Context(), scheduled)
	if c.Skipped != "" || len(c.Jobs) != 2 || c.Jobs[0].Fired != 2 || c.Jobs[0].HeldBack != 8 {
		t.Fatalf("cycle %+v, want 2 firings and 8 queued", c)
	}
	h, ok := e.s.Memory().Held.HeldBack(rules.FiringKey{Rule: "routine", TicketID: ids[2]})
	if !ok || h.Cap != plan.CapQueue || h.Class != "updates and notes" {
		t.Errorf("HeldBack(#%d) = %+v %v, want queued", ids[2], h, ok)
	}
	ex := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return e.s.set }, e.st, e.clk.Now, firing.ExplainHeldBack(e.s.Memory().Held))
	out, err := ex.Explain(t.Context(), ids[2])
	want := "routine: never fired; can fire on the next poll where it holds; queued in the cycle of " + at.Format(time.RFC3339) +
		" (class: updates and notes): the request budget of the cycle ran out before its turn"
	if err != nil || !strings.Contains(out, want) || strings.Contains(out, "held back by") {
		t.Errorf("explanation (%v):\n%s\nwant a line %q", err, out, want)
	}
	if d, f := metricValue(t, e.s.m.Exec.Decisions.WithLabelValues("routine", "deferred")), metricValue(t, e.s.m.Exec.Decisions.WithLabelValues("routine", "failed")); d != 8 || f != 0 {
		t.Errorf("decisions deferred %v, failed %v; want 8 and 0", d, f)
	}
	if q := metricValue(t, e.s.m.Queued.WithLabelValues("updates and notes")); q != 8 {
		t.Errorf("queued firings %v, want 8", q)
	}
	for range 4 {
		e.clk.Advance(time.Minute)
		e.s.runCycle(t.Context(), scheduled)
	}
	for _, id := range ids {
		if n := len(e.notesWith(id, "routine check")); n != 1 {
			t.Errorf("ticket #%d: %d notes after five cycles, want 1", id, n)
		}
	}
	if q := metricValue(t, e.s.m.Queued.WithLabelValues("updates and notes")); q != 0 {
		t.Errorf("queued firings %v once drained, want 0", q)
	}
}

// TestBacklogDoesNotStretchTheFeed: the planner stretches the polling to
// the background budget, not the draining of a backlog: a cycle whose
// firings spent far more than the budget leaves the next tick on time.
func TestBacklogDoesNotStretchTheFeed(t *testing.T) {
	e := newEnv(t, backlogOrderRules, WithBudget(6))
	for i := range 10 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprint("r", i), Priority: 1, ResponderID: sdsim.DefaultAgentID})
	}
	c, err := e.s.RunCycle(t.Context()) // the full sync and 10 firings: 20 requests and more
	if err != nil || c.Requests < 20 || c.Jobs[0].Fired != 10 {
		t.Fatalf("first cycle: %+v %v, want 10 firings", c, err)
	}
	if f := e.s.plan.stretch(); f != 1 {
		t.Errorf("stretch %v after a cycle of %d requests, %d of them the sync's: want 1", f, c.Requests, c.Sync.Requests)
	}
	e.clk.Advance(time.Minute)
	if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" {
		t.Errorf("the next tick was skipped (%s)", c.Skipped)
	}
}

// notingGroupNotifier is a groupNotifier that notes, when a group is
// posted, how many routine notes the desk already had.
type notingGroupNotifier struct {
	groupNotifier
	notesBefore func() int
	seen        []int
}

func (n *notingGroupNotifier) AlertGroup(ctx context.Context, g firing.AlertGroup) error {
	n.seen = append(n.seen, n.notesBefore())
	return n.groupNotifier.AlertGroup(ctx, g)
}

// TestGroupedUrgentAlertBeforeRoutineWork: a rule's grouped alert goes
// out as soon as every one of its firings reached it, before the routine
// notes queued behind them (but the one the routine share gives the
// longest-waiting ticket among the first five places), not at the end of
// the cycle.
func TestGroupedUrgentAlertBeforeRoutineWork(t *testing.T) {
	e := newEnv(t, backlogOrderRules)
	var routine []int64
	for i := range 6 {
		routine = append(routine, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprint("r", i), Priority: 1, ResponderID: sdsim.DefaultAgentID}).ID)
	}
	urgent := addUrgent(e, 7) // more than group_over (5): one message
	notes := func() int {
		n := 0
		for _, id := range routine {
			n += len(e.notesWith(id, "routine check"))
		}
		return n
	}
	gn := &notingGroupNotifier{groupNotifier: groupNotifier{e.notif}, notesBefore: notes}
	s := e.another(firing.ClientDesk(e.client), backlogOrderRules, e.st, gn)
	if _, err := s.RunCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(gn.seen) != 1 || gn.seen[0] != 1 {
		t.Errorf("grouped alerts posted with %v routine notes already written, want one message after 1 (the routine share)", gn.seen)
	}
	if n := notes(); n != len(routine) {
		t.Errorf("%d routine notes after the cycle, want %d", n, len(routine))
	}
	named := e.notif.named("urgent")
	for _, id := range urgent {
		if named[id] != 1 {
			t.Errorf("urgent ticket #%d named %d times, want 1", id, named[id])
		}
	}
}
