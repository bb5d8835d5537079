package scheduler

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// changeAll updates every ticket of ids (the change feed then brings them
// all in the next cycle: a page per hundred).
func changeAll(e *env, ids []int64) {
	for _, id := range ids {
		e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Subject += "." })
	}
}

// sweepEnv is a desk of 250 tickets that one rule polls every minute,
// never acting, under a budget of budget requests a minute.
func sweepEnv(t *testing.T, budget int) (*env, []int64) {
	t.Helper()
	e := newEnv(t, `version: 1
rules:
  - name: sweep
    query: "priority:1"
    if: ticket.subject == "never"
    every: 1m
    actions: [{note: "x"}]
`, WithBudget(budget), WithFeed(feed.WithTrashEvery(24*time.Hour)))
	var ids []int64
	for range 250 {
		ids = append(ids, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "t", Priority: 1}).ID)
	}
	return e, ids
}

func TestBudgetStretchesIntervals(t *testing.T) {
	e, ids := sweepEnv(t, 1)
	e.runOnce() // the full sync
	var sent []int
	for range historyLen {
		e.clk.Advance(time.Minute)
		changeAll(e, ids) // three feed pages and more
		res := e.runOnce()
		if res[0].Requests < 3 {
			t.Fatalf("cycle sent %d requests, want at least 3 feed pages for 250 changes", res[0].Requests)
		}
		sent = append(sent, res[0].Requests)
	}
	want := 0.0
	for _, n := range sent {
		want += float64(n) / float64(len(sent))
	}
	// That many requests a minute against a budget of 1 request a minute.
	if got := metricValue(t, e.s.m.stretch); math.Abs(got-want) > 1e-9 {
		t.Fatalf("stretch metric = %v, want %v (requests per cycle %v)", got, want, sent)
	}
	if got := metricValue(t, e.s.m.plannedRPM); math.Abs(got-want) > 1e-9 {
		t.Errorf("planned requests per minute = %v, want %v", got, want)
	}
	// Scheduled ticks before interval*stretch are skipped ...
	skips := int(math.Ceil(want)) - 1
	for i := range skips {
		e.clk.Advance(time.Minute)
		if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "stretched" {
			t.Fatalf("tick %d after the last run: %+v, want skipped", i+1, c)
		}
	}
	// ... and the one after it runs.
	e.clk.Advance(time.Minute)
	if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" || !c.Sync.Complete {
		t.Fatalf("tick after the stretched interval: %+v, want a complete run", c)
	}
	if got := metricValue(t, e.s.m.skipped.WithLabelValues("cycle", "stretched")); got != float64(skips) {
		t.Errorf("skipped runs metric = %v, want %d", got, skips)
	}
}

func TestNoStretchWithinBudget(t *testing.T) {
	e := newEnv(t, urgentRules, WithBudget(1000))
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "t", Priority: 4})
	e.runOnce()
	e.clk.Advance(time.Minute)
	if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" {
		t.Fatalf("skipped within budget: %+v", c)
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
			p := newPlanner(tc.budget, newMetrics(nil))
			p.replan(time.Minute)
			const ticks = 600
			runs := 0
			for i := range ticks {
				now := t0.Add(time.Duration(i)*time.Minute + time.Duration(i%7)*time.Millisecond)
				if p.due(time.Minute, now) {
					runs++
					p.record(time.Minute, tc.requests, 0, now)
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
	e, ids := sweepEnv(t, 2)
	e.runOnce()
	e.clk.Advance(time.Minute)
	changeAll(e, ids)
	e.runOnce()
	if got := metricValue(t, e.s.m.stretch); got <= 1 {
		t.Fatalf("stretch = %v, want more than 1 (a busy minute against a budget of 2)", got)
	}
	// Quiet now: one feed request a cycle; the average falls under the
	// budget within the planner's history and the scheduled runs go ahead
	// every tick.
	skipped := 0
	// (The first quiet cycle still re-reads the burst: it lies within the
	// feed's overlap.)
	const ticks = historyLen + 6
	for range ticks {
		e.clk.Advance(time.Minute)
		if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" {
			skipped++
		}
	}
	if got := metricValue(t, e.s.m.stretch); got != 1 {
		t.Fatalf("stretch = %v after the load dropped, want 1", got)
	}
	e.clk.Advance(time.Minute)
	if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" {
		t.Fatalf("run after recovery skipped: %+v", c)
	}
	if skipped > 4 {
		t.Errorf("%d of %d runs skipped while recovering", skipped, ticks)
	}
}

// TestListBudgetStretchesToo: the desk limits ticket lists apart from the
// rest; cycles whose change feed would list more than the list budget are
// stretched by that, even when the overall budget has room.
func TestListBudgetStretchesToo(t *testing.T) {
	p := newPlanner(100, newMetrics(nil))
	p.listBudget = 10
	p.replan(time.Minute)
	p.record(time.Minute, 30, 25, t0)
	if got := p.stretch(); got != 2.5 {
		t.Errorf("stretch %v, want 2.5 (25 lists a minute against 10)", got)
	}
	p.record(time.Minute, 30, 0, t0.Add(time.Minute)) // average 12.5 lists
	if got := p.stretch(); got != 1.25 {
		t.Errorf("stretch %v, want 1.25", got)
	}
	p.listBudget = 0
	p.record(time.Minute, 30, 25, t0.Add(2*time.Minute))
	if got := p.stretch(); got != 1 {
		t.Errorf("stretch %v without a list budget, want 1 (30 requests within 100)", got)
	}
}
