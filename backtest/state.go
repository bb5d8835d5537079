package backtest

// What the replay keeps of each rule, and of each rule and ticket.

import (
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// ruleState is what the replay keeps of one rule.
type ruleState struct {
	i    int // the rule's place in the file
	rule *rules.Rule
	cap  int
	cls  plan.Class
	// reads are the classes of fields the rule reads (fields.go): a change
	// of none of them does not ask it again; qreads, those its query
	// reads, while the query does not hold (tstate.qFails)
	reads, qreads fieldClass

	logPos int // the change log read up to here (absolute)
	// all are every rule's states (replay.st), n rules to a slot: the
	// rules asked about one ticket find theirs side by side
	all    *[][]tstate
	n      int
	timers []timer // min-heap: when a ticket's answer may change
	// liveTimers are the slots with a timer (timerAt set)
	liveTimers int

	// The open decisions by the queue's two orders: w those with a since,
	// f the failed ones that never waited (since now, whenever now is).
	uw, aw, uf, af heap
	pending        int // open decisions that did not fail
	inF            int // decisions in uf and af

	// per cycle
	placed, admitted int
	capped           bool
	popped           []int32 // slots taken out of the heaps this cycle
}

// tstate is what a rule knows of one ticket: 80 bytes, for every rule
// and ticket (half a million of them at 50 rules and 10,000 tickets, in
// each replay).
type tstate struct {
	timerAt int64 // the live timer, 0 for none
	streak  int64 // since when it matches (unix ns), 0 when it does not
	// quietUntil: the last verdict, on the ticket's current version, said
	// it does not hold until then (unix ns; 0 when it said nothing of the
	// kind). It said so at one of the rule's runs before this one, so from
	// before any instant matchSince probes.
	quietUntil int64
	firedAt    int64 // the ledger's last firing
	waiting    int64 // since when it waits (the scheduler's queue memory)

	seen          uint32 // the ticket's version last asked about
	stamp         uint32 // the cycle and phase that asked, placed or restored it (dedup): see stampOf
	renderChecked uint32 // the version whose actions were checked once (renderBad: and failed to render)
	episode       int32  // the ledger's episode
	gen           uint32 // heap entries of another gen are stale
	qVer          uint32 // the ticket's version when put in the queue (replay.queueVer)

	holds      bool // the rule decides on it
	qFails     bool // its query does not hold
	failed     bool // and failed (the if, or rendering the actions)
	renderBad  bool
	epOpen     bool // the ledger's episode is open
	claimed    bool // and fired
	hasWaiting bool
	inQ        bool // open: in the heaps
	qFailed    bool // failed when put in
	inF        bool // put in uf and af
	// inWindow: the supervisor's last answer was on a ticket in its
	// 30-day window
	inWindow bool
}

// renderFailed is whether the actions failed to render on the ticket's
// version v.
func (st *tstate) renderFailed(v uint32) bool { return st.renderBad && st.renderChecked == v }

// failRender notes that the actions failed to render on the current
// version: the decision fails.
func (st *tstate) failRender() {
	st.failed, st.renderChecked, st.renderBad = true, st.seen, true
}

// The phases of a cycle that mark a state as done with (tstate.stamp):
// one field serves them all, as they come one after the other.
const (
	phaseAsked  = iota // evaluate: asked about once
	phaseTaken         // plan: placed once
	phasePopped        // restore: put back once
	phases
)

// stampOf is the stamp of phase in cycle.
func stampOf(cycle int, phase uint32) uint32 { return uint32(cycle)*phases + phase }

// record is the ledger's record, as rules.Once reads it.
func (st *tstate) record() rules.FiringRecord {
	rec := rules.FiringRecord{Open: st.epOpen, Episode: int64(st.episode)}
	if st.claimed {
		rec.FiringID, rec.State, rec.FiredAt = 1, rules.FiringDone, time.Unix(0, st.firedAt)
	}
	return rec
}

func newRuleState(i int, rule *rules.Rule, reads, qreads fieldClass, all *[][]tstate, n int) *ruleState {
	return &ruleState{i: i, rule: rule, all: all, n: n, cap: plan.RuleCap(rule), cls: plan.ClassOf(rule), reads: reads, qreads: qreads,
		uw: heap{less: urgencyLess}, uf: heap{less: urgencyLess}, aw: heap{less: ageLess}, af: heap{less: ageLess}}
}

// state is what the rule knows of the ticket in slot s.
func (rs *ruleState) state(s int32) *tstate {
	return &(*rs.all)[s/stateBlock][int(s%stateBlock)*rs.n+rs.i]
}

// stateBlock is how many slots' states a block of replay.st holds: the
// states grow by blocks, never copied.
const stateBlock = 256
