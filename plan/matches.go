package plan

import (
	"cmp"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// What the status pages show of the last cycles, from their decisions:
// each rule's last evaluation and what the cycles held back.

// RuleMatches is what a rule's last evaluation found.
type RuleMatches struct {
	At      time.Time        // the cycle's time
	Tickets []int64          // the tickets it decided to act on (query and if hold), by id
	Failed  map[int64]string // tickets it failed on, with why
}

// Matches is what the evaluation at now of the rules due found, by rule:
// every rule of due has an entry, its tickets in id order.
func Matches(due []*rules.Rule, decisions []rules.Decision, now time.Time) map[string]RuleMatches {
	out := make(map[string]RuleMatches, len(due))
	for _, r := range due {
		out[r.Name] = RuleMatches{At: now}
	}
	for _, d := range decisions {
		m, ok := out[d.Rule]
		if !ok {
			continue
		}
		if d.Err != nil {
			if m.Failed == nil {
				m.Failed = map[int64]string{}
			}
			m.Failed[d.TicketID] = d.Err.Error()
		} else {
			m.Tickets = append(m.Tickets, d.TicketID)
		}
		out[d.Rule] = m
	}
	for name, m := range out {
		slices.Sort(m.Tickets)
		out[name] = m
	}
	return out
}

// HeldTicket is one decision a cycle held back.
type HeldTicket struct {
	TicketID int64
	Held
}

// HeldTickets lists what was held back, by rule, in ticket order.
func HeldTickets(held map[string]map[int64]Held) map[string][]HeldTicket {
	out := make(map[string][]HeldTicket, len(held))
	for rule, byTicket := range held {
		for id, h := range byTicket {
			out[rule] = append(out[rule], HeldTicket{TicketID: id, Held: h})
		}
		slices.SortFunc(out[rule], func(a, b HeldTicket) int { return cmp.Compare(a.TicketID, b.TicketID) })
	}
	return out
}
