package scheduler

import (
	"math"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

func TestBudgetStretchesIntervals(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: sweep
    query: "priority:1"
    if: ticket.subject == "never"
    every: 1m
    actions: [{note: "x"}]
`, WithBudget(1))
	for range 70 { // three filter pages of 30 per cycle
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "t", Priority: 1})
	}
	for range 5 {
		res := e.runOnce()
		if res[0].Requests < 3 {
			t.Fatalf("cycle sent %d requests, want at least 3 pages", res[0].Requests)
		}
		e.clk.Advance(time.Minute)
	}
	// 3 pages a minute against a budget of 1 request a minute.
	want := 3.0
	if got := metricValue(t, e.s.m.stretch); math.Abs(got-want) > 1e-9 {
		t.Fatalf("stretch metric = %v, want %v", got, want)
	}
	if got := metricValue(t, e.s.m.plannedRPM); math.Abs(got-want) > 1e-9 {
		t.Errorf("planned requests per minute = %v, want %v", got, want)
	}
	j := e.s.jobs[0]
	// Scheduled ticks before interval*stretch are skipped ...
	for _, at := range []time.Duration{time.Minute, 2 * time.Minute} {
		if res := e.s.runJob(t.Context(), j, true); res.Skipped != "stretched" {
			t.Fatalf("tick %v after the last run: %+v, want skipped", at, res)
		}
		e.clk.Advance(time.Minute)
	}
	// ... and the one after it runs (3m since the last run).
	if res := e.s.runJob(t.Context(), j, true); res.Skipped != "" || !res.Complete {
		t.Fatalf("tick after the stretched interval: %+v, want a complete run", res)
	}
	if got := metricValue(t, e.s.m.skipped.WithLabelValues("sweep", "stretched")); got != 2 {
		t.Errorf("skipped runs metric = %v, want 2", got)
	}
	if r := e.s.Ready(); r.Stretch <= 1 {
		t.Errorf("Ready().Stretch = %v", r.Stretch)
	}
}

func TestNoStretchWithinBudget(t *testing.T) {
	e := newEnv(t, urgentRules, WithBudget(1000))
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "t", Priority: 4})
	e.runOnce()
	e.clk.Advance(time.Minute)
	if res := e.s.runJob(t.Context(), e.s.jobs[0], true); res.Skipped != "" {
		t.Fatalf("skipped within budget: %+v", res)
	}
	if got := metricValue(t, e.s.m.stretch); got != 1 {
		t.Errorf("stretch = %v, want 1", got)
	}
}
