package backtest

// The replay's firings as the report reads them, once it has replayed.

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// finish turns the compact firings into the report's, once, and lets the
// replay's state go first: at 30 days the firings are most of the memory.
func (r *replay) finish() {
	r.countStillHeld()
	r.drop()
	// The state just let go is hundreds of MB at 30 days, not yet
	// collected: collect it before the report's firings (80 bytes each)
	// are allocated, so that the peak is the larger of the two rather
	// than their sum. A backtest is a batch job; one collection is cheap.
	runtime.GC()
	r.firings = make([]Firing, 0, r.fired.len())
	loc := r.from.Location()
	k := cursor[fired]{chunks: r.fired.chunks, free: true}
	for _, m := range r.fired.marks {
		at := time.Unix(0, m.at).In(loc)
		for range m.n {
			f := k.next()
			r.firings = append(r.firings, Firing{Rule: r.rules[f.rule].Name, TicketID: r.ids[f.slot], At: at,
				MatchingSince: time.Unix(0, f.since).In(loc), Episode: int64(f.episode)})
		}
	}
	r.fired = chunked[fired]{}
}

// chunked are values added in time order, in chunks (a chunk is never
// copied to grow), with the times they came at.
type chunked[T any] struct {
	chunks [][]T
	marks  []mark
}

// mark says that the next n values came at at (unix ns).
type mark struct {
	at int64
	n  int
}

func (c *chunked[T]) add(at int64, v T) {
	if len(c.marks) == 0 || c.marks[len(c.marks)-1].at != at {
		c.marks = append(c.marks, mark{at: at})
	}
	c.marks[len(c.marks)-1].n++
	if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == firedChunk {
		c.chunks = append(c.chunks, make([]T, 0, firedChunk))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
}

func (c *chunked[T]) len() int {
	n := 0
	for _, ch := range c.chunks {
		n += len(ch)
	}
	return n
}

// cursor walks chunked values in order; with free, it lets each chunk go
// once walked.
type cursor[T any] struct {
	chunks [][]T
	c, j   int
	free   bool
}

func (k *cursor[T]) next() T {
	v := k.chunks[k.c][k.j]
	if k.j++; k.j == len(k.chunks[k.c]) {
		if k.free {
			k.chunks[k.c] = nil
		}
		k.c, k.j = k.c+1, 0
	}
	return v
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
