package scheduler

import (
	"fmt"
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

// TestStretchKeepsTheAverageWithinBudget drives the planner with gocron's
// ticks (one per interval, a few milliseconds late) and checks that the
// requests per minute actually sent stay within the budget without
// stretching much more than needed, for factors just above 1, between 1
// and 2, and above 2.
func TestStretchKeepsTheAverageWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		requests, budget int
	}{
		{26, 25}, // factor 1.04: at most 25 runs of 26 ticks
		{30, 20}, // factor 1.5: two ticks of three
		{50, 20}, // factor 2.5
		{10, 20}, // within budget: every tick
	} {
		t.Run(fmt.Sprintf("%d requests against %d a minute", tc.requests, tc.budget), func(t *testing.T) {
			j := &job{key: "k", name: "k", every: time.Minute}
			p := newPlanner(tc.budget, newMetrics(nil))
			p.replan([]*job{j}, t0)
			const ticks = 600
			runs := 0
			for i := range ticks {
				now := t0.Add(time.Duration(i)*time.Minute + time.Duration(i%7)*time.Millisecond)
				if p.due(j, now) {
					runs++
					p.record(j, tc.requests, now)
				}
			}
			rate := float64(runs*tc.requests) / ticks
			if rate > float64(tc.budget)+1e-9 {
				t.Errorf("%d runs in %d minutes: %.2f requests a minute, over the budget of %d", runs, ticks, rate, tc.budget)
			}
			if want := min(float64(tc.budget), float64(tc.requests)); rate < 0.97*want {
				t.Errorf("%d runs in %d minutes: %.2f requests a minute, stretched well beyond the %.0f needed", runs, ticks, rate, want)
			}
		})
	}
}

func TestStretchRecoversWhenLoadDrops(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: sweep
    query: "priority:1"
    if: ticket.subject == "never"
    every: 1m
    actions: [{note: "x"}]
`, WithBudget(2))
	var ids []int64
	for range 70 { // three filter pages of 30 per cycle
		ids = append(ids, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "t", Priority: 1}).ID)
	}
	e.runOnce()
	if got := metricValue(t, e.s.m.stretch); got != 1.5 {
		t.Fatalf("stretch = %v, want 1.5 (3 requests a minute, budget 2)", got)
	}
	for _, id := range ids {
		e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Priority = 2 })
	}
	// One page a cycle now: the average falls under the budget within the
	// planner's history and the scheduled runs go ahead every tick.
	j := e.s.jobs[0]
	skipped := 0
	for range historyLen + 3 {
		e.clk.Advance(time.Minute)
		if res := e.s.runJob(t.Context(), j, true); res.Skipped != "" {
			skipped++
		}
	}
	if got := metricValue(t, e.s.m.stretch); got != 1 {
		t.Fatalf("stretch = %v after the load dropped, want 1", got)
	}
	e.clk.Advance(time.Minute)
	if res := e.s.runJob(t.Context(), j, true); res.Skipped != "" {
		t.Fatalf("run after recovery skipped: %+v", res)
	}
	if skipped > 2 {
		t.Errorf("%d of %d runs skipped while recovering", skipped, historyLen+3)
	}
}
