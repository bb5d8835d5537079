package plan

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// NextRun is the one answer to "when does this rule run next". A deskbot
// first starts on Friday 2026-11-27 at 11:07 UTC; the cron rules' first
// time after it is Monday at 09:00.
func TestNextRun(t *testing.T) {
	friday, monday := time.Date(2026, 11, 27, 11, 7, 0, 0, time.UTC), time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	set := mustRules(t, `version: 1
rules:
  - name: cron
    query: status:3
    cron: "0 9 * * 1-5"
    actions: [{note: n}]
  - name: cron-no-catch-up
    query: status:3
    cron: "0 9 * * 1-5"
    catch_up: 0s
    actions: [{note: n}]
  - name: every
    query: status:2
    every: 10m
    actions: [{note: n}]
`)
	cronRule, strict, every := set.Rule("cron"), set.Rule("cron-no-catch-up"), set.Rule("every")
	rec := func(r *rules.Rule, since, last time.Time) store.RuleRun {
		return store.RuleRun{Rule: r.Name, Schedule: ScheduleKey(r), Since: since, LastRun: last}
	}
	at := func(h, m int) time.Time {
		return monday.Add(time.Duration(h-9)*time.Hour + time.Duration(m)*time.Minute)
	}
	tuesday := monday.Add(24 * time.Hour)
	for _, c := range []struct {
		name string
		r    *rules.Rule
		rec  store.RuleRun
		ok   bool
		now  time.Time
		want time.Time
	}{
		{"cron never scheduled waits for its time", cronRule, store.RuleRun{}, false, friday, monday},
		{"cron never scheduled, at 09:20, waits for tomorrow", cronRule, store.RuleRun{}, false, at(9, 20), tuesday},
		{"cron scheduled on Friday, restart at 09:20: caught up now", cronRule, rec(cronRule, friday, time.Time{}), true, at(9, 20), monday},
		{"cron scheduled on Friday, restart at 10:00: the edge of catch_up", cronRule, rec(cronRule, friday, time.Time{}), true, at(10, 0), monday},
		{"cron scheduled on Friday, restart at 10:01: too late", cronRule, rec(cronRule, friday, time.Time{}), true, at(10, 1), tuesday},
		{"cron scheduled on Friday, restart at 15:00: too late", cronRule, rec(cronRule, friday, time.Time{}), true, at(15, 0), tuesday},
		{"cron that ran at 09:00, restart at 09:20", cronRule, rec(cronRule, friday, monday), true, at(9, 20), tuesday},
		{"cron that ran late at 09:20, restart at 09:30", cronRule, rec(cronRule, friday, at(9, 20)), true, at(9, 30), tuesday},
		{"cron under another schedule counts as new", cronRule, store.RuleRun{Rule: "cron", Schedule: "cron 0 8 * * *", Since: friday}, true, at(9, 20), tuesday},
		{"cron without catch_up, restart at 09:20", strict, rec(strict, friday, time.Time{}), true, at(9, 20), tuesday},
		{"every never ran: now", every, store.RuleRun{}, false, at(9, 20), at(9, 20)},
		{"every scheduled, never ran: now", every, rec(every, friday, time.Time{}), true, at(9, 20), at(9, 20)},
		{"every ran 4 minutes ago: in 6", every, rec(every, friday, at(9, 16)), true, at(9, 20), at(9, 26)},
		{"every ran an hour ago: now", every, rec(every, friday, at(8, 20)), true, at(9, 20), at(9, 20)},
	} {
		if got := NextRun(c.r, c.rec, c.ok, c.now); !got.Equal(c.want) {
			t.Errorf("%s: NextRun = %v, want %v", c.name, got, c.want)
		}
	}
}

// A job's schedule from the store's records: the rules without a record
// under their schedule are recorded from now; the job's last run is the
// latest under the rules' schedules; a rewritten record keeps its first
// Since and never moves LastRun back, unless the schedule changed.
func TestJobRuns(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	set := mustRules(t, `version: 1
rules:
  - name: a
    query: status:2
    every: 10m
    actions: [{note: n}]
  - name: b
    query: status:3
    cron: "0 9 * * 1-5"
    catch_up: 2h
    actions: [{note: n}]
`)
	rs := set.Rules()
	runs := map[string]store.RuleRun{
		"a": {Rule: "a", Schedule: "every 10m0s", LastRun: now.Add(-5 * time.Minute)},
		"b": {Rule: "b", Schedule: "every 5m0s", LastRun: now.Add(-time.Minute)}, // under another schedule: not counted
	}
	if got := Unrecorded(rs, runs, now); len(got) != 1 || got[0].Rule != "b" || !got[0].Since.Equal(now) || got[0].Schedule != "cron 0 9 * * 1-5" {
		t.Errorf("Unrecorded = %+v, want b from now", got)
	}
	if got := LastRun(rs, runs); !got.Equal(now.Add(-5 * time.Minute)) {
		t.Errorf("LastRun = %v, want a's", got)
	}
	if got := FirstNextRun(rs, runs, now); !got.Equal(now.Add(5 * time.Minute)) {
		t.Errorf("FirstNextRun = %v, want a's, 10m after its last run (b, never scheduled, waits for Tuesday)", got)
	}
	if got := CatchUp(rs, time.Minute); got != 2*time.Hour {
		t.Errorf("CatchUp = %v, want b's 2h", got)
	}
	old := store.RuleRun{Rule: "a", Schedule: "every 10m0s", Since: now.Add(-time.Hour), LastRun: now}
	if got := MergeRun(old, store.RuleRun{Rule: "a", Schedule: "every 10m0s", Since: now, LastRun: now.Add(-time.Minute)}); !got.Since.Equal(old.Since) || !got.LastRun.Equal(now) {
		t.Errorf("MergeRun under the same schedule = %+v, want Since and LastRun kept", got)
	}
	if got := MergeRun(old, store.RuleRun{Rule: "a", Schedule: "every 5m0s", Since: now}); !got.Since.Equal(now) || !got.LastRun.IsZero() {
		t.Errorf("MergeRun under another schedule = %+v, want the new record", got)
	}
}
