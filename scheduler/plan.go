package scheduler

import (
	"time"

	"github.com/deskbot/deskbot/rules"
)

// The plan step: a pure function of the cycle's decisions (evaluate), the
// ledger's states of them (readLedger) and the queue's memory of since
// when each waits, deciding what the cycle executes and in which order.
// No I/O: the same inputs always give the same plan.

// ledgerView is what the ledger says of a cycle's decisions, read before
// planning (readLedger).
type ledgerView struct {
	// begun are the firings under way (an action done, still pending),
	// by rule: they finish whatever the rules say now.
	begun map[string][]int64
	// states are the ledger's records of the decisions' (rule, ticket),
	// by rule and ticket; a ticket absent was never claimed (or its
	// state could not be read: Claim decides).
	states map[string]map[int64]rules.FiringRecord
}

// planInput is everything planning needs.
type planInput struct {
	set       *rules.Set
	rules     []*rules.Rule // the due rules, in file order
	now       time.Time
	decisions []rules.Decision // the due rules' decisions (evaluate)
	ledger    ledgerView
	since     map[rules.FiringKey]time.Time // since when a decision left waiting waits
	dryRun    bool                          // order only: a dry run admits nothing
	cycleCap  int                           // WithMaxFiringsPerCycle (0: none)
	groups    bool                          // the notifier can post grouped alerts
}

// plan is what a cycle executes: its decisions in the queue's order and,
// outside a dry run, what storm control admitted, held back and groups.
type plan struct {
	set *rules.Set
	now time.Time
	// matching are the tickets each rule decided on, failed ones
	// included (never end an episode on an error): reconcile's input.
	matching map[string][]int64
	// decisions are the evaluated decisions and those of the firings
	// under way, by ticket, then the rules' file order.
	decisions []rules.Decision
	ordered   []rules.Decision         // the queue's order (order)
	begun     map[rules.FiringKey]bool // firings under way: finish them, no re-check
	admission
}

// makePlan plans a cycle (see plan).
func makePlan(in planInput) *plan {
	p := &plan{set: in.set, now: in.now, matching: map[string][]int64{}}
	for _, d := range in.decisions {
		p.matching[d.Rule] = append(p.matching[d.Rule], d.TicketID)
	}
	p.decisions, p.begun = withBegun(in.set, in.decisions, in.ledger.begun)
	sortDecisions(in.set, p.decisions) // by ticket, then file order: a ticket's decisions together
	p.ordered = order(in.set, in.now, p.decisions, p.begun, in.since)
	if !in.dryRun {
		p.admission = admit(in, p.ordered)
	}
	return p
}

// withBegun adds to decisions a decision for every firing that has begun
// (an action done) and is still pending, whether or not its rule matches
// the ticket now: its first actions may have moved the ticket out of the
// query (an assignment, a status), and the rest must still happen, once.
// The executor renders their actions on the re-read ticket and does not
// re-check the rule (begun).
func withBegun(set *rules.Set, decisions []rules.Decision, begunByRule map[string][]int64) ([]rules.Decision, map[rules.FiringKey]bool) {
	if begunByRule == nil {
		return decisions, nil
	}
	have := make(map[rules.FiringKey]bool, len(decisions))
	for _, d := range decisions {
		have[keyOf(d)] = true
	}
	begun := map[rules.FiringKey]bool{}
	for name, ids := range begunByRule {
		r := set.Rule(name)
		if r == nil {
			continue // the rule is gone from the file: nothing to render
		}
		for _, id := range ids {
			key := rules.FiringKey{Rule: name, TicketID: id}
			begun[key] = true
			if !have[key] {
				decisions = append(decisions, rules.Decision{Rule: name, Once: r.Once, TicketID: id})
			}
		}
	}
	return decisions, begun
}

// alreadyFired is the cheap pre-check: true when the ledger shows that a
// Claim could not win now (the same rules.Once.MayFire the Claim decides
// with).
func (v ledgerView) alreadyFired(d rules.Decision, now time.Time) bool {
	info, found := v.states[d.Rule][d.TicketID]
	return found && !d.Once.MayFire(info, now)
}
