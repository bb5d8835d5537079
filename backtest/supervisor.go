package backtest

// The supervisor's firings, and how they compare with deskbot's.

import (
	"math"
	"time"
)

// supFirings are the supervisor's firings, kept small (a month of hourly
// runs without caps makes millions): 8 bytes each, in the order they
// came; and how many each rule made, by the rule's place. slots are the
// supervisor's mirror's slots by ticket id, set when its replay ends.
type supFirings struct {
	chunked[supPair]
	count []int
	slots map[int64]int32
}

// supPair is a firing's rule (its place in the file) and ticket (its slot).
type supPair struct{ rule, slot int32 }

func newSupFirings(rules int) supFirings {
	return supFirings{count: make([]int, rules)}
}

func (s *supFirings) add(rule, slot int32, at int64) {
	s.chunked.add(at, supPair{rule, slot})
	s.count[rule]++
}

// compareSupervisor is, by the rule's place, how the supervisor's replay
// compares with deskbot's firings (fs, in the order they came, on the tickets of ids by slot): for
// each of them, the supervisor's first firing of the same rule on the
// same ticket at or after it, before deskbot's next firing there. A firing
// after the supervisor's last run of the rule (lastRun, by the rule's
// place) is not missed: the replay ended before its next hourly run.
//
// It walks both lists in time order, deskbot's first at equal times, and
// keeps by rule and ticket deskbot's firing still waiting for the
// supervisor's: its next firing there answers it, or deskbot's next
// firing there leaves it unanswered. A firing of the supervisor's that no
// firing of deskbot's waited for answers deskbot's next one there as
// earlier (a weekday cron rule's reminder, which the hourly supervisor
// sends as soon as the ticket matches).
func compareSupervisor(fs chunked[fired], ids []int64, sup supFirings, lastRun []time.Time) []*Supervisor {
	n := len(sup.count)
	const none = math.MinInt64
	waiting := make([]int64, len(sup.slots)*n) // slot*n + rule
	early := make([]int64, len(sup.slots)*n)   // the supervisor's firing no firing of deskbot's waited for
	for i := range waiting {
		waiting[i], early[i] = none, none
	}
	later, earlier := make([][]time.Duration, n), make([][]time.Duration, n)
	missed, unreached, same := make([]int, n), make([]int, n), make([]int, n)
	unanswered := func(rule int32, at int64) {
		if lastRun[rule].Before(time.Unix(0, at)) {
			unreached[rule]++
		} else {
			missed[rule]++
		}
	}
	ours := func(f fired, at int64) {
		k := int(sup.slots[ids[f.slot]])*n + int(f.rule)
		if e := early[k]; e != none {
			earlier[f.rule] = append(earlier[f.rule], time.Duration(at-e))
			early[k] = none
			return
		}
		if w := waiting[k]; w != none {
			unanswered(f.rule, w)
		}
		waiting[k] = at
	}
	mine := func(m mark, k *cursor[fired]) {
		for range m.n {
			ours(k.next(), m.at)
		}
	}
	fk, fm := cursor[fired]{chunks: fs.chunks}, fs.marks
	sk := cursor[supPair]{chunks: sup.chunks}
	for _, m := range sup.marks {
		for ; len(fm) > 0 && fm[0].at <= m.at; fm = fm[1:] {
			mine(fm[0], &fk)
		}
		for range m.n {
			p := sk.next()
			k := int(p.slot)*n + int(p.rule)
			if w := waiting[k]; w != none {
				later[p.rule] = append(later[p.rule], time.Duration(m.at-w))
				if w == m.at {
					same[p.rule]++
				}
				waiting[k] = none
			} else {
				early[k] = m.at
			}
		}
	}
	for _, m := range fm {
		mine(m, &fk)
	}
	for k, w := range waiting {
		if w != none {
			unanswered(int32(k%n), w)
		}
	}
	out := make([]*Supervisor, n)
	for i := range out {
		l := latency(later[i])
		out[i] = &Supervisor{Firings: sup.count[i], Compared: l.N, Missed: missed[i], Unreached: unreached[i], Later: l, SameTime: same[i],
			Earlier: latency(earlier[i])}
	}
	return out
}

// supervisorLimit is the limit of a report that replays the supervisor.
const supervisorLimit = "the desk's supervisor is replayed as it runs: every hour, over the tickets updated in the last 30 days, without caps"
