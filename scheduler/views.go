package scheduler

import (
	"slices"
	"time"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
)

// Memory is what the scheduler and its cycles know without a desk request,
// for the status pages and `deskbot rules plan` to build their views from:
// safe to read while cycles run, never to change.
type Memory struct {
	At       time.Time     // the scheduler's clock when it was taken
	Set      *rules.Set    // the rules running now
	Ready    Readiness     // the jobs, their last cycles, the mirrors
	Tick     time.Duration // the cycle's tick
	CycleCap int           // the per-cycle cap (WithMaxFiringsPerCycle)
	DryRun   bool          // decisions are logged, not acted on
	Runs     firing.RuleRunReader
	Ledger   firing.OutlookLedger
	Feed     *feed.Feed // the mirror
	cycle.Memories
}

// Memory returns what the scheduler knows now.
func (s *Scheduler) Memory() Memory {
	s.mu.Lock()
	set := s.set
	s.mu.Unlock()
	return Memory{At: s.cfg.clock.Now(), Set: set, Ready: s.Ready(), Tick: s.tickEvery(), CycleCap: s.cfg.run.CycleCap,
		DryRun: s.cfg.run.DryRun, Runs: s.runs, Ledger: s.ledger, Feed: s.feed, Memories: s.runner.Memories()}
}

// Readiness is the scheduler's state for /readyz and `deskbot rules why`.
type Readiness struct {
	Ready        bool          // every job finished at least one complete cycle
	LastComplete time.Time     // the latest complete cycle of any job
	Stretch      float64       // the factor the budget stretches intervals by (1: none)
	Jobs         []JobStatus   // one per poll job
	Mirror       []feed.Status // the state of each workspace's ticket mirror
}

// JobStatus describes one poll job.
type JobStatus struct {
	Name         string        // the job's name: its first rule, +N for the others
	Rules        []string      // the job's rules
	Query        string        // unexpanded
	Every        time.Duration // the interval, when not a cron schedule
	Cron         string        // the cron schedule, if any
	LastStart    time.Time     // when its last cycle started
	LastComplete time.Time     // when its last complete cycle started
	LastOutcome  string        // complete, incomplete or ""
	LastRequests int           // desk requests of its last cycle
}

// Ready reports the jobs and their last cycles.
func (s *Scheduler) Ready() Readiness {
	s.mu.Lock()
	jobs := slices.Clone(s.jobs)
	s.mu.Unlock()
	r := Readiness{Ready: true, Stretch: s.plan.stretch()}
	for _, j := range jobs {
		j.stat.Lock()
		st := j.status
		j.stat.Unlock()
		st.Name, st.Rules, st.Query, st.Every, st.Cron = j.name, j.ruleNames(), j.query, j.Every, j.cron
		if st.LastComplete.IsZero() {
			r.Ready = false
		}
		if st.LastComplete.After(r.LastComplete) {
			r.LastComplete = st.LastComplete
		}
		r.Jobs = append(r.Jobs, st)
	}
	r.Mirror = s.feed.Status()
	return r
}
