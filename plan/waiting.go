package plan

import (
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// The queue's age order across cycles: since when each decision that a
// cycle left waiting (held back by a cap, or queued when its time ran
// out) has waited. WaitingMemory keeps it from cycle to cycle.

// WaitingMemory keeps since when each decision left waiting has waited,
// from cycle to cycle. The zero value is ready; it is safe for
// concurrent use.
type WaitingMemory struct {
	mu    sync.Mutex
	since map[rules.FiringKey]time.Time
}

// Note takes what a cycle at now of the rules due left waiting (held, see
// Waiting) and returns how many decisions wait, by class.
func (m *WaitingMemory) Note(set *rules.Set, due []*rules.Rule, held map[string]map[int64]Held, now time.Time) map[Class]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.since = Waiting(set, due, m.since, held, now)
	return WaitingByClass(set, m.since)
}

// Since is WaitingSince over what earlier cycles left waiting.
func (m *WaitingMemory) Since(ds []rules.Decision, begun map[string][]int64) map[rules.FiringKey]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return WaitingSince(m.since, ds, begun)
}

// Waiting is since when each decision waits after a cycle at now of the
// rules due: those the cycle held back wait since an earlier cycle left
// them waiting (old), else since now; those of rules not in the cycle
// (and still in set) keep their time.
func Waiting(set *rules.Set, due []*rules.Rule, old map[rules.FiringKey]time.Time, held map[string]map[int64]Held, now time.Time) map[rules.FiringKey]time.Time {
	since := map[rules.FiringKey]time.Time{}
	inCycle := map[string]bool{}
	for _, r := range due {
		inCycle[r.Name] = true
	}
	for k, at := range old {
		if !inCycle[k.Rule] && set.Rule(k.Rule) != nil {
			since[k] = at // not decided in this cycle: still waiting
		}
	}
	for rule, ids := range held {
		for id := range ids {
			k := rules.FiringKey{Rule: rule, TicketID: id}
			at, ok := old[k]
			if !ok {
				at = now
			}
			since[k] = at
		}
	}
	return since
}

// WaitingByClass is how many decisions of since wait, by their rule's
// class in set.
func WaitingByClass(set *rules.Set, since map[rules.FiringKey]time.Time) map[Class]int {
	byClass := map[Class]int{}
	for k := range since {
		byClass[ClassOf(set.Rule(k.Rule))]++
	}
	return byClass
}

// WaitingSince is since when each of ds, and each firing under way in
// begun (by rule), waits, for those an earlier cycle left waiting (since).
func WaitingSince(since map[rules.FiringKey]time.Time, ds []rules.Decision, begun map[string][]int64) map[rules.FiringKey]time.Time {
	out := map[rules.FiringKey]time.Time{}
	note := func(k rules.FiringKey) {
		if at, ok := since[k]; ok {
			out[k] = at
		}
	}
	for _, d := range ds {
		note(Key(d))
	}
	for rule, ids := range begun {
		for _, id := range ids {
			note(rules.FiringKey{Rule: rule, TicketID: id})
		}
	}
	return out
}
