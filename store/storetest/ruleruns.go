package storetest

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/store"
)

// testRuleRuns checks the record of each time rule's last run: round trip,
// Since kept under the same schedule, LastRun only moving forward (a late
// write from a replica that lost the leadership changes nothing), a new
// schedule starting afresh, bad input refused, and another replica (a new
// leader) reading what the first wrote.
func testRuleRuns(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	set := func(r store.RuleRun) {
		t.Helper()
		if err := s.SetRuleRuns(ctx, r); err != nil {
			t.Fatalf("SetRuleRuns(%+v): %v", r, err)
		}
	}
	get := func(s *store.Store) map[string]store.RuleRun {
		t.Helper()
		runs, err := s.RuleRuns(ctx)
		if err != nil {
			t.Fatalf("RuleRuns: %v", err)
		}
		return runs
	}
	if runs := get(s); len(runs) != 0 {
		t.Fatalf("a new store has rule runs %+v", runs)
	}
	const cron = "cron 0 9 * * 1-5"
	mon9 := t0 // a Monday, 09:00
	set(store.RuleRun{Rule: "reminder", Schedule: cron, Since: mon9.Add(-time.Hour)})
	set(store.RuleRun{Rule: "poll", Schedule: "every 5m", Since: mon9, LastRun: mon9.Add(3 * time.Minute)})
	want := map[string]store.RuleRun{
		"reminder": {Rule: "reminder", Schedule: cron, Since: mon9.Add(-time.Hour)},
		"poll":     {Rule: "poll", Schedule: "every 5m", Since: mon9, LastRun: mon9.Add(3 * time.Minute)},
	}
	check := func(what string, got map[string]store.RuleRun) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d records %+v, want %+v", what, len(got), got, want)
		}
		for name, w := range want {
			g := got[name]
			if g.Rule != w.Rule || g.Schedule != w.Schedule || !g.Since.Equal(w.Since) || !g.LastRun.Equal(w.LastRun) {
				t.Errorf("%s: rule %s = %+v, want %+v", what, name, g, w)
			}
		}
	}
	check("first writes", get(s))

	// The run completes: LastRun set, Since kept although the write
	// carries a later one.
	set(store.RuleRun{Rule: "reminder", Schedule: cron, Since: mon9, LastRun: mon9.Add(30 * time.Second)})
	r := want["reminder"]
	r.LastRun = mon9.Add(30 * time.Second)
	want["reminder"] = r
	check("after a run", get(s))

	// Older runs and "never" do not move LastRun back.
	set(store.RuleRun{Rule: "reminder", Schedule: cron, Since: mon9, LastRun: mon9.Add(-24 * time.Hour)})
	set(store.RuleRun{Rule: "reminder", Schedule: cron, Since: mon9})
	check("after older writes", get(s))

	// Another replica (a new leader) reads the same and carries on.
	other := open(t)
	check("read by another replica", get(other))
	if err := other.SetRuleRuns(ctx, store.RuleRun{Rule: "poll", Schedule: "every 5m", Since: mon9, LastRun: mon9.Add(8 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	p := want["poll"]
	p.LastRun = mon9.Add(8 * time.Minute)
	want["poll"] = p
	check("the new leader's run, read by the first", get(s))

	// A new schedule starts afresh, even with an earlier LastRun.
	set(store.RuleRun{Rule: "poll", Schedule: "every 10m", Since: mon9.Add(time.Hour)})
	want["poll"] = store.RuleRun{Rule: "poll", Schedule: "every 10m", Since: mon9.Add(time.Hour)}
	check("after a schedule change", get(s))

	for _, bad := range []store.RuleRun{
		{Schedule: cron, Since: mon9},
		{Rule: "x", Since: mon9},
		{Rule: "x", Schedule: cron},
	} {
		if err := s.SetRuleRuns(ctx, store.RuleRun{Rule: "ok", Schedule: cron, Since: mon9}, bad); err == nil {
			t.Errorf("SetRuleRuns(%+v) = nil, want an error", bad)
		}
	}
	check("after refused writes (none of a batch with a bad run is written)", get(s))

	// A batch is written whole.
	if err := s.SetRuleRuns(ctx,
		store.RuleRun{Rule: "reminder", Schedule: cron, Since: mon9, LastRun: mon9.Add(24 * time.Hour)},
		store.RuleRun{Rule: "poll", Schedule: "every 10m", Since: mon9, LastRun: mon9.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	r.LastRun = mon9.Add(24 * time.Hour)
	want["reminder"] = r
	want["poll"] = store.RuleRun{Rule: "poll", Schedule: "every 10m", Since: mon9.Add(time.Hour), LastRun: mon9.Add(2 * time.Hour)}
	check("after a batch", get(s))
}
