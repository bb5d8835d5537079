package scheduler

import (
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// Memory is what the scheduler knows without a desk request, for the
// status pages and `deskbot rules plan` to read (they build their views
// from it). Its memories are
// the scheduler's own: safe to read while cycles run, never to change.
type Memory struct {
	At       time.Time     // the scheduler's clock when it was taken
	Set      *rules.Set    // the rules running now
	Ready    Readiness     // the jobs, their last cycles, the mirrors
	Tick     time.Duration // the cycle's tick
	CycleCap int           // the per-cycle cap (WithMaxFiringsPerCycle)
	DryRun   bool          // decisions are logged, not acted on
	Runs     firing.RuleRunReader
	Ledger   firing.OutlookLedger
	Feed     *feed.Feed          // the mirror
	People   rules.People        // the names looked up for the rules (digests' groups)
	Held     *plan.HeldMemory    // what each rule's last cycle held back
	Matches  *plan.MatchMemory   // each rule's last evaluation in this process
	Waiting  *plan.WaitingMemory // since when held-back decisions wait
	Budgets  *firing.Budgets     // the rules over their run-time budget
}

// Memory returns what the scheduler knows now.
func (s *Scheduler) Memory() Memory {
	s.mu.Lock()
	set := s.set
	s.mu.Unlock()
	mem := s.runner.Memories()
	return Memory{At: s.cfg.clock.Now(), Set: set, Ready: s.Ready(), Tick: s.tickEvery(), CycleCap: s.cfg.maxFirings,
		DryRun: s.cfg.dryRun, Runs: s.runs, Ledger: s.ledger, Feed: s.feed, People: mem.People,
		Held: mem.Held, Matches: mem.Matches, Waiting: mem.Waiting, Budgets: mem.Budgets}
}
