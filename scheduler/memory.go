package scheduler

import (
	"time"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
)

// Memory is what the scheduler knows without a desk request, for the
// status pages and `deskbot rules plan` to read (they build their views
// from it). Its memories are the scheduler's own and its cycles' (People,
// Held, Matches, Waiting, Budgets): safe to read while cycles run, never
// to change.
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
