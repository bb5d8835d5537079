package plan

import (
	"time"

	"github.com/deskbot/deskbot/rules"
)

// The plan step: a pure function of the cycle's decisions (Evaluate), the
// ledger's states of them and the queue's memory of since when each
// waits, deciding what the cycle executes and in which order. No I/O: the
// same inputs always give the same plan.

// LedgerView is what the ledger says of a cycle's decisions, read before
// planning.
type LedgerView struct {
	// Begun are the firings under way (an action done, still pending),
	// by rule: they finish whatever the rules say now.
	Begun map[string][]int64
	// States are the ledger's records of the decisions' (rule, ticket),
	// by rule and ticket; a ticket absent was never claimed (or its
	// state could not be read: Claim decides).
	States map[string]map[int64]rules.FiringRecord
}

// Input is everything planning needs.
type Input struct {
	Set       *rules.Set
	Now       time.Time
	Decisions []rules.Decision // the due rules' decisions (Evaluate)
	Ledger    LedgerView
	Since     map[rules.FiringKey]time.Time // since when a decision an earlier cycle left waiting waits
	DryRun    bool                          // order only: a dry run admits nothing
	CycleCap  int                           // the bound on firings per cycle across rules (0: none)
	Groups    bool                          // the notifier can post grouped alerts
}

// Plan is what a cycle executes: its decisions in the queue's order and,
// outside a dry run, what storm control admitted, held back and groups.
type Plan struct {
	// Matching are the tickets each rule decided on, failed ones
	// included (never end an episode on an error): what reconciling the
	// episodes keeps open.
	Matching map[string][]int64
	// Decisions are the evaluated decisions and those of the firings
	// under way, by ticket, then the rules' file order.
	Decisions []rules.Decision
	Ordered   []rules.Decision         // the queue's order (Order)
	Begun     map[rules.FiringKey]bool // firings under way: finish them, no re-check
	Admission                          // empty in a dry run
}

// Make plans a cycle (see Plan).
func Make(in Input) *Plan {
	p := &Plan{Matching: map[string][]int64{}}
	for _, d := range in.Decisions {
		p.Matching[d.Rule] = append(p.Matching[d.Rule], d.TicketID)
	}
	p.Decisions, p.Begun = WithBegun(in.Set, in.Decisions, in.Ledger.Begun)
	SortDecisions(in.Set, p.Decisions) // by ticket, then file order: a ticket's decisions together
	p.Ordered = Order(in.Set, in.Now, p.Decisions, p.Begun, in.Since)
	if !in.DryRun {
		p.Admission = admit(in, p.Ordered)
	}
	return p
}

// WithBegun adds to decisions a decision for every firing that has begun
// (an action done) and is still pending, whether or not its rule matches
// the ticket now: its first actions may have moved the ticket out of the
// query (an assignment, a status), and the rest must still happen, once.
// The executor renders their actions on the re-read ticket and does not
// re-check the rule (begun).
func WithBegun(set *rules.Set, decisions []rules.Decision, begunByRule map[string][]int64) ([]rules.Decision, map[rules.FiringKey]bool) {
	if begunByRule == nil {
		return decisions, nil
	}
	have := make(map[rules.FiringKey]bool, len(decisions))
	for _, d := range decisions {
		have[Key(d)] = true
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

// AlreadyFired is the cheap pre-check: true when the ledger shows that a
// Claim could not win now (the same rules.Once.MayFire the Claim decides
// with).
func (v LedgerView) AlreadyFired(d rules.Decision, now time.Time) bool {
	info, found := v.States[d.Rule][d.TicketID]
	return found && !d.Once.MayFire(info, now)
}
