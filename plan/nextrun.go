package plan

import (
	"cmp"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// ScheduleKey is rule r's schedule as the store records it: "every 5m" or
// "cron 0 9 * * 1-5". A record under another schedule does not count.
func ScheduleKey(r *rules.Rule) string {
	if r.Cron != "" {
		return "cron " + r.Cron
	}
	return "every " + cmp.Or(r.Every, rules.DefaultEvery).String()
}

// NextRun is when rule r runs next, seen at now, from its stored record
// rec (ok: there is one). It is the one answer the scheduler, the dry
// run, `deskbot rules plan`, `deskbot rules why` and `/ticket why` give:
//
//   - An every rule that never ran runs at once (now); one that ran runs
//     an interval after its last run, now at the earliest: a restart or a
//     new leader keeps its phase.
//   - A cron rule runs at its schedule's times (in UTC, as gocron's ticks
//     and the store's times are) after the later of its last
//     run and the moment a deskbot first scheduled it, never because a
//     process is new: one never scheduled waits for its next time. A time
//     missed while no deskbot led is returned (before now: due at once)
//     while it is at most the rule's catch_up ago, so it runs once, late;
//     an older one is skipped for the next time.
//
// Within a process the scheduler then follows its own runs; a run held
// back by a cap or made on an incomplete mirror may come sooner.
func NextRun(r *rules.Rule, rec store.RuleRun, ok bool, now time.Time) time.Time {
	ok = ok && rec.Schedule == ScheduleKey(r)
	if r.Cron == "" {
		if !ok || rec.LastRun.IsZero() {
			return now
		}
		if next := rec.LastRun.Add(cmp.Or(r.Every, rules.DefaultEvery)); next.After(now) {
			return next
		}
		return now
	}
	sched, err := cron.ParseStandard(r.Cron)
	if err != nil {
		return time.Time{} // the loader refuses such a rule
	}
	base := now
	if ok {
		base = Later(rec.Since, rec.LastRun)
	}
	if slot, missed := missedSlot(sched, base, now, r.CatchUp); missed {
		return slot
	}
	return sched.Next(Later(base, now).UTC())
}

// missedSlot is the latest time of sched after base, at or before now and
// at most catchUp before it.
func missedSlot(sched cron.Schedule, base, now time.Time, catchUp time.Duration) (time.Time, bool) {
	if !base.Before(now) || catchUp < 0 {
		return time.Time{}, false
	}
	// cron's Next is the first time strictly after its argument, in
	// whole seconds.
	from := Later(base, now.Add(-catchUp-time.Second)).UTC()
	var slot time.Time
	for t := sched.Next(from); !t.IsZero() && !t.After(now); t = sched.Next(t) {
		if t.After(base) && now.Sub(t) <= catchUp {
			slot = t
		}
	}
	return slot, !slot.IsZero()
}

// Later is the later of a and b.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// NextRunText says when rule r runs next, next being NextRun at now:
// "at the next cycle (every 1m)", "2026-11-30T09:00:00Z, in 2d21h53m (cron
// 0 9 * * 1-5)", or for a cron time missed while no deskbot led "now,
// catching up its run of 2026-11-30T09:00:00Z (cron 0 9 * * 1-5, catch_up
// 1h)".
func NextRunText(r *rules.Rule, next, now time.Time) string {
	sched := "every " + rules.ShortDuration(cmp.Or(r.Every, rules.DefaultEvery))
	if r.Cron != "" {
		sched = "cron " + r.Cron
	}
	switch {
	case next.IsZero():
		return "never (" + sched + ")"
	case next.After(now):
		return fmt.Sprintf("%s, in %s (%s)", next.UTC().Format(time.RFC3339), rules.ShortDuration(next.Sub(now).Round(time.Minute)), sched)
	case r.Cron != "":
		return fmt.Sprintf("now, catching up its run of %s (%s, catch_up %s)", next.UTC().Format(time.RFC3339), sched, rules.ShortDuration(r.CatchUp))
	}
	return fmt.Sprintf("at the next cycle (%s)", sched)
}

// CatchUp is how late a missed run of a job of rules rs may still run:
// the longest catch_up of rs, and at least a tick (a tick's lateness
// never skips a run).
func CatchUp(rs []*rules.Rule, tick time.Duration) time.Duration {
	d := tick
	for _, r := range rs {
		d = max(d, r.CatchUp)
	}
	return d
}

// FirstNextRun is the earliest NextRun of rs by the records runs.
func FirstNextRun(rs []*rules.Rule, runs map[string]store.RuleRun, now time.Time) time.Time {
	var next time.Time
	for _, r := range rs {
		rec, ok := runs[r.Name]
		if t := NextRun(r, rec, ok, now); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

// LastRun is the latest run of rs recorded in runs under their schedules.
func LastRun(rs []*rules.Rule, runs map[string]store.RuleRun) time.Time {
	var last time.Time
	for _, r := range rs {
		if rec, ok := runs[r.Name]; ok && rec.Schedule == ScheduleKey(r) {
			last = Later(last, rec.LastRun)
		}
	}
	return last
}

// Unrecorded is the records to write for the rules of rs that runs holds
// none of under their schedule: scheduled from now, never run.
func Unrecorded(rs []*rules.Rule, runs map[string]store.RuleRun, now time.Time) []store.RuleRun {
	var fresh []store.RuleRun
	for _, r := range rs {
		if rec, ok := runs[r.Name]; !ok || rec.Schedule != ScheduleKey(r) {
			fresh = append(fresh, store.RuleRun{Rule: r.Name, Schedule: ScheduleKey(r), Since: now})
		}
	}
	return fresh
}

// MergeRun is what the store keeps when r is written over old: under the
// recorded schedule, Since stays the first and LastRun only moves forward;
// under another schedule r replaces old.
func MergeRun(old, r store.RuleRun) store.RuleRun {
	if old.Schedule != r.Schedule {
		return r
	}
	r.Since = old.Since
	if old.LastRun.After(r.LastRun) {
		r.LastRun = old.LastRun
	}
	return r
}
