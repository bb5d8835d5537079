package backtest

// The supervisor's firings, and how they compare with deskbot's.

import (
	"math"
	"time"
)

// supFirings are the supervisor's firings, kept small (a month of hourly
// runs without caps makes millions): 8 bytes each, in chunks, in the order
// they came, with the times they came at; and how many each rule made, by
// the rule's place. slots are the supervisor's mirror's slots by ticket
// id, set when its replay ends.
type supFirings struct {
	chunks [][]supPair
	marks  []supMark
	count  []int
	slots  map[int64]int32
}

// supPair is a firing's rule (its place in the file) and ticket (its slot).
type supPair struct{ rule, slot int32 }

// supMark says that the next n firings came at at (unix ns).
type supMark struct {
	at int64
	n  int
}

func newSupFirings(rules int) supFirings {
	return supFirings{count: make([]int, rules)}
}

func (s *supFirings) add(rule, slot int32, at int64) {
	if len(s.marks) == 0 || s.marks[len(s.marks)-1].at != at {
		s.marks = append(s.marks, supMark{at: at})
	}
	s.marks[len(s.marks)-1].n++
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1]) == firedChunk {
		s.chunks = append(s.chunks, make([]supPair, 0, firedChunk))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, supPair{rule, slot})
	s.count[rule]++
}

// compareSupervisor is, by the rule's place, how the supervisor's replay
// compares with deskbot's firings (fs, in the order they came): for
// each of them, the supervisor's first firing of the same rule on the
// same ticket at or after it, before deskbot's next firing there. A firing
// after the supervisor's last run of the rule (lastRun, by the rule's
// place) is not missed: the replay ended before its next hourly run.
//
// It walks both lists in time order, deskbot's first at equal times, and
// keeps by rule and ticket deskbot's firing still waiting for the
// supervisor's: its next firing there answers it, or deskbot's next
// firing there leaves it unanswered.
func compareSupervisor(fs [][]fired, sup supFirings, lastRun []time.Time) []*Supervisor {
	n := len(sup.count)
	const none = math.MinInt64
	waiting := make([]int64, len(sup.slots)*n) // slot*n + rule
	for i := range waiting {
		waiting[i] = none
	}
	later := make([][]time.Duration, n)
	missed, unreached, same := make([]int, n), make([]int, n), make([]int, n)
	unanswered := func(rule int32, at int64) {
		if lastRun[rule].Before(time.Unix(0, at)) {
			unreached[rule]++
		} else {
			missed[rule]++
		}
	}
	ours := func(f fired) {
		k := int(sup.slots[f.id])*n + int(f.rule)
		if w := waiting[k]; w != none {
			unanswered(f.rule, w)
		}
		waiting[k] = f.at
	}
	fc, fi := 0, 0 // deskbot's next firing: chunk, index
	c, j := 0, 0   // the supervisor's
	for _, m := range sup.marks {
		for ; fc < len(fs) && fs[fc][fi].at <= m.at; fi++ {
			ours(fs[fc][fi])
			if fi+1 == len(fs[fc]) {
				fc, fi = fc+1, -1
			}
		}
		for range m.n {
			p := sup.chunks[c][j]
			if j++; j == len(sup.chunks[c]) {
				c, j = c+1, 0
			}
			k := int(p.slot)*n + int(p.rule)
			if w := waiting[k]; w != none {
				later[p.rule] = append(later[p.rule], time.Duration(m.at-w))
				if w == m.at {
					same[p.rule]++
				}
				waiting[k] = none
			}
		}
	}
	for ; fc < len(fs); fc, fi = fc+1, 0 {
		for _, f := range fs[fc][fi:] {
			ours(f)
		}
	}
	for k, w := range waiting {
		if w != none {
			unanswered(int32(k%n), w)
		}
	}
	out := make([]*Supervisor, n)
	for i := range out {
		l := latency(later[i])
		out[i] = &Supervisor{Firings: sup.count[i], Compared: l.N, Missed: missed[i], Unreached: unreached[i], Later: l, SameTime: same[i]}
	}
	return out
}

// supervisorLimit is the limit of a report that replays the supervisor.
const supervisorLimit = "the desk's supervisor is replayed as it runs: every hour, over the tickets updated in the last 30 days, without caps"
