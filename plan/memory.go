package plan

import (
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// MatchMemory keeps each rule's last evaluation for the status pages: the
// pages read it instead of evaluating every rule over the whole mirror
// again (a page renders in milliseconds, an evaluation of a large desk
// takes longer). The zero value is ready; it is safe for concurrent use.
type MatchMemory struct {
	mu    sync.Mutex
	rules map[string]RuleMatches
	// since is, per rule, when each ticket it matches began to match: the
	// first of the consecutive evaluations that matched it. A claim
	// records it (Since) so that /firings says how long the ticket
	// waited for its firing, not only how long the firing took.
	since map[string]map[int64]time.Time
	// decisions is, per rule, its last evaluation's decisions: the plan
	// page's outlook starts from them.
	decisions map[string][]rules.Decision
}

// Since is when ticket id began to match rule, as the noted evaluations
// saw it: the first of the consecutive cycles that matched it; at when
// none did (a firing under way, a restart).
func (m *MatchMemory) Since(rule string, id int64, at time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.since[rule][id]; ok && t.Before(at) {
		return t
	}
	return at
}

// Note records the decisions at now of the rules due (Matches).
func (m *MatchMemory) Note(due []*rules.Rule, decisions []rules.Decision, now time.Time) {
	fresh := Matches(due, decisions, now)
	byRule := make(map[string][]rules.Decision, len(due))
	for _, r := range due {
		byRule[r.Name] = nil
	}
	for _, d := range decisions {
		if ds, ok := byRule[d.Rule]; ok {
			byRule[d.Rule] = append(ds, d)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rules == nil {
		m.rules = map[string]RuleMatches{}
		m.since = map[string]map[int64]time.Time{}
		m.decisions = map[string][]rules.Decision{}
	}
	for name, ds := range byRule {
		m.decisions[name] = ds
	}
	for name, rm := range fresh {
		m.rules[name] = rm
		// A ticket keeps its match start while consecutive evaluations
		// match it; one that stopped matching starts afresh.
		old := m.since[name]
		since := make(map[int64]time.Time, len(rm.Tickets))
		for _, id := range rm.Tickets {
			if t, ok := old[id]; ok {
				since[id] = t
			} else {
				since[id] = now
			}
		}
		m.since[name] = since
	}
}

// Matches is each rule's last evaluation, leaving out the rules set (when
// not nil) no longer has.
func (m *MatchMemory) Matches(set *rules.Set) map[string]RuleMatches {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]RuleMatches, len(m.rules))
	for n, rm := range m.rules {
		if set != nil && set.Rule(n) == nil {
			continue // a rule since removed by a reload
		}
		out[n] = rm
	}
	return out
}

// Decisions is the last evaluation's decisions of every rule of set, in
// set's order.
func (m *MatchMemory) Decisions(set *rules.Set) []rules.Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range set.Rules() {
		n += len(m.decisions[r.Name])
	}
	out := make([]rules.Decision, 0, n)
	for _, r := range set.Rules() {
		out = append(out, m.decisions[r.Name]...)
	}
	return out
}
