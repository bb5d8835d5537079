package backtest

// The replay's firings as the report reads them, once it has replayed.

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// finish turns the compact firings into the report's, once, and lets the
// replay's state go first: at 30 days the firings are most of the memory.
func (r *replay) finish() {
	r.countStillHeld()
	r.drop()
	n := 0
	for _, c := range r.fired {
		n += len(c)
	}
	r.firings = make([]Firing, 0, n)
	loc := r.from.Location()
	for i, c := range r.fired {
		for _, f := range c {
			r.firings = append(r.firings, Firing{Rule: r.rules[f.rule].Name, TicketID: f.id, At: time.Unix(0, f.at).In(loc),
				MatchingSince: time.Unix(0, f.since).In(loc), Episode: int64(f.episode)})
		}
		r.fired[i] = nil
	}
	r.fired = nil
}

// countStillHeld sets stillHeld from the rules' states.
func (r *replay) countStillHeld() {
	r.stillHeld = make(map[string][2]int, len(r.rs))
	for _, rs := range r.rs {
		var n [2]int
		for s := range len(r.tickets) {
			st := rs.state(int32(s))
			switch {
			case !st.hasWaiting:
			case st.streak != 0:
				n[0]++
			default:
				n[1]++
			}
		}
		r.stillHeld[rs.rule.Name] = n
	}
}

// drop lets the replay's state go once it has replayed.
func (r *replay) drop() {
	r.rs, r.st, r.tickets, r.slots, r.log, r.logMask, r.asks, r.at, r.ver, r.queueVer = nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
}

// firedChunk is how many firings a chunk of replay.fired holds.
const firedChunk = 1 << 16

// sortFirings orders firings by time, rule file order, then ticket.
func sortFirings(set *rules.Set, fs []Firing) {
	order := map[string]int{}
	for i, r := range set.Rules() {
		order[r.Name] = i
	}
	slices.SortStableFunc(fs, func(a, b Firing) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(order[a.Rule], order[b.Rule]), cmp.Compare(a.TicketID, b.TicketID))
	})
}

// earlier is the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// never is a time after every other, as unix ns.
const never = math.MaxInt64
