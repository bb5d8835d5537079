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

// Readiness is the jobs' and the mirror's state, for the status pages
// (the budget's stretch and the last complete cycle are metrics).
type Readiness struct {
	Jobs   []JobStatus   // one per poll job
	Mirror []feed.Status // the state of each workspace's ticket mirror
}

// JobStatus describes one poll job.
type JobStatus struct {
	Rules        []string  // the job's rules
	LastStart    time.Time // when its last cycle started
	LastComplete time.Time // when its last complete cycle started
	LastOutcome  string    // complete, incomplete or ""
	LastRequests int       // desk requests of its last cycle
}

// Ready reports the jobs and their last cycles.
func (s *Scheduler) Ready() Readiness {
	s.mu.Lock()
	jobs := slices.Clone(s.jobs)
	s.mu.Unlock()
	r := Readiness{Mirror: s.feed.Status()}
	for _, j := range jobs {
		j.stat.Lock()
		st := j.status
		j.stat.Unlock()
		st.Rules = j.ruleNames()
		r.Jobs = append(r.Jobs, st)
	}
	return r
}
