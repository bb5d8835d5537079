package plan

import (
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// Time rules run at their time. Each rule's last run is kept in the state
// store, read in every cycle before the due jobs are chosen (so at start,
// after a reload and when a replica gains the leadership) and written
// when a job's run completes. A job's next run is NextRun over its rules'
// records (Load); within a process it then follows its own runs (Ran: an
// every job an interval after its previous due time, a cron job at its
// next time), until another replica's run shows in the store.

// Schedule is when a job, the rules that share a query and a schedule,
// runs. Set Rules, Every and Cron; the rest is kept by its methods, which
// are safe for concurrent use.
type Schedule struct {
	Rules []*rules.Rule
	Every time.Duration
	Cron  cron.Schedule // nil: an every job

	mu         sync.Mutex
	next       time.Time // when the job is due next (zero: not scheduled yet)
	last       time.Time // its latest run, this process's or the store's
	loaded     bool      // next was taken from the store (Load)
	incomplete bool      // its last run saw an incomplete mirror
}

// Load takes the schedule from the records runs when this process has not
// scheduled the job yet or another replica ran it since, and returns its
// next run then (ok).
func (s *Schedule) Load(runs map[string]store.RuleRun, now time.Time) (next time.Time, ok bool) {
	last := LastRun(s.Rules, runs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded && !last.After(s.last) {
		return s.next, false // nothing new: this process's own schedule stands
	}
	s.loaded = true
	s.last = Later(s.last, last)
	s.next = FirstNextRun(s.Rules, runs, now)
	return s.next, true
}

// Unread schedules a job not scheduled yet as if it never ran, when the
// records cannot be read: no cron rule fires for being new, and the next
// Load that works schedules it properly.
func (s *Schedule) Unread(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next.IsZero() {
		s.next = FirstNextRun(s.Rules, nil, now)
	}
}

// Due reports whether the job runs at now, ticking every tick: when its
// time has come, or, with rerun (the cycle a first full sync kicks), when
// it is an every job whose last run saw an incomplete mirror (a cron
// job's such run left it due).
func (s *Schedule) Due(now time.Time, tick time.Duration, rerun bool) bool {
	if s.dueAt(now, tick) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return rerun && s.Cron == nil && s.incomplete
}

// dueAt reports whether the job's time has come at now; tick/2 absorbs
// the tick's lateness. A job not scheduled yet is not due. A cron time
// further back than the job's catch-up window (the process was paused, or
// led again after a gap that no other replica filled) is skipped for the
// next.
func (s *Schedule) dueAt(now time.Time, tick time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next.IsZero() || now.Before(s.next.Add(-tick/2)) {
		return false
	}
	if s.Cron != nil && now.Sub(s.next) > CatchUp(s.Rules, tick) {
		s.next = s.Cron.Next(now.UTC())
		return false
	}
	return true
}

// Ran records the job's run at now and returns its rules' runs, for the
// store: its next run is an interval from the previous due time (a late
// tick is paid back; an early, unscheduled run starts the interval over),
// or the cron's next time. A cron run on an incomplete mirror (a first
// full sync under way, a failing desk) is not the run of its time: it
// records nothing and the job stays due, so the next cycles run it again
// within its catch-up window.
func (s *Schedule) Ran(now time.Time, complete bool) []store.RuleRun {
	if s.Cron != nil && !complete {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Cron != nil {
		s.next = s.Cron.Next(now.UTC())
	} else {
		base := s.next
		if base.IsZero() || now.Sub(base) > s.Every || base.After(now) {
			base = now
		}
		s.next = base.Add(s.Every)
	}
	s.last, s.loaded, s.incomplete = Later(s.last, now), true, !complete
	runs := make([]store.RuleRun, 0, len(s.Rules))
	for _, r := range s.Rules {
		runs = append(runs, store.RuleRun{Rule: r.Name, Schedule: ScheduleKey(r), Since: now, LastRun: now})
	}
	return runs
}

// Next is when the job is due next (zero: not scheduled yet).
func (s *Schedule) Next() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// DueBy makes the job due at t at the latest.
func (s *Schedule) DueBy(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next.IsZero() || t.Before(s.next) {
		s.next = t
	}
}

// Adopt carries old's schedule over (the same job rebuilt by a reload):
// a rule is never due because its job was rebuilt.
func (s *Schedule) Adopt(old *Schedule) {
	old.mu.Lock()
	next, last, loaded, incomplete := old.next, old.last, old.loaded, old.incomplete
	old.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next, s.last, s.loaded, s.incomplete = next, last, loaded, incomplete
}
