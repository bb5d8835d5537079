package plan

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/store"
)

const scheduleRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: every
    query: "priority:1"
    every: 5m
    actions: [{note: "checked"}]
  - name: daily
    query: "priority:2"
    cron: "0 9 * * *"
    actions: [{note: "good morning"}]
`

// A job's schedule from the store's records and then from its own runs: an
// every job an interval after its previous due time (a late tick paid
// back), a cron job at its next time but only after a complete run, a
// missed cron time skipped once it is older than the catch-up window.
func TestSchedule(t *testing.T) {
	set := mustRules(t, scheduleRules)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	tick := time.Minute

	every := &Schedule{Rules: set.Rules()[:1], Every: 5 * time.Minute}
	if every.Due(t0, tick, true) {
		t.Fatal("a job not scheduled yet is due")
	}
	last := store.RuleRun{Rule: "every", Schedule: ScheduleKey(set.Rule("every")), Since: t0.Add(-time.Hour), LastRun: t0.Add(-2 * time.Minute)}
	if next, ok := every.Load(map[string]store.RuleRun{"every": last}, t0); !ok || !next.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("Load = %v %v, want the next run 5m after the last one (%v)", next, ok, t0.Add(3*time.Minute))
	}
	if _, ok := every.Load(map[string]store.RuleRun{"every": last}, t0); ok {
		t.Error("Load of the same records again took them")
	}
	late := t0.Add(3*time.Minute + 20*time.Second)
	if !every.Due(late, tick, false) {
		t.Fatal("every job not due at its time")
	}
	runs := every.Ran(late, false)
	if len(runs) != 1 || runs[0].Rule != "every" || !runs[0].LastRun.Equal(late) {
		t.Errorf("Ran = %+v, want the run of rule every at %v", runs, late)
	}
	if got, want := every.Next(), t0.Add(8*time.Minute); !got.Equal(want) {
		t.Errorf("Next after a late run = %v, want %v (the lateness paid back)", got, want)
	}
	if !every.Due(late, tick, true) || every.Due(late, tick, false) {
		t.Error("an every job whose run saw an incomplete mirror: want due again only in the cycle a first full sync kicks")
	}

	sched, _ := cron.ParseStandard("0 9 * * *")
	daily := &Schedule{Rules: set.Rules()[1:], Cron: sched}
	daily.Unread(t0.Add(-time.Hour))
	if got := daily.Next(); !got.Equal(t0) {
		t.Fatalf("Next of a cron job never run = %v, want its next time %v", got, t0)
	}
	if runs := daily.Ran(t0, false); runs != nil || !daily.Due(t0.Add(time.Minute), tick, false) {
		t.Errorf("a cron run on an incomplete mirror recorded %+v or left the job not due", runs)
	}
	if daily.Due(t0.Add(2*time.Hour), tick, false) {
		t.Error("a cron time two hours back (catch-up window a tick) is still due")
	}
	if got, want := daily.Next(), t0.Add(24*time.Hour); !got.Equal(want) {
		t.Errorf("Next after a skipped cron time = %v, want %v", got, want)
	}
	daily.DueBy(t0.Add(3 * time.Hour))
	rebuilt := &Schedule{Rules: daily.Rules, Cron: sched}
	rebuilt.Adopt(daily)
	if got, want := rebuilt.Next(), t0.Add(3*time.Hour); !got.Equal(want) {
		t.Errorf("Next of a rebuilt job after DueBy = %v, want %v", got, want)
	}
}
