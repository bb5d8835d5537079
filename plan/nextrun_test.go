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
