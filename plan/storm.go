package plan

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Storm control: a first run on a busy desk (or a rule that suddenly
// matches hundreds of tickets) must not flood the chat or the desk. A
// cycle starts at most max_firings_per_cycle firings of a rule and at most
// a bound across rules (Input.CycleCap); the decisions over a cap are not
// executed and wait for later cycles (Held). When a cycle fires a rule on
// more tickets than its group_over, its alerts are posted as one message
// per alert action (Admission.Grouping) and its pages start without their
// first step, which one escalator tick takes for them all
// (Admission.PageGrouping).

// Held says why a decision was not executed in a cycle: a per-cycle cap,
// or its place in the queue (Order) when the cycle's time ran out.
type Held struct {
	At time.Time // the cycle's time
	// Cap is "rule": the rule's max_firings_per_cycle; "cycle": the bound
	// across rules; "queue": not capped, but queued behind more urgent or
	// older work when the cycle's share of the request budget ran out.
	Cap   string
	Limit int    // the cap's value (caps only)
	Class string // the decision's class (pages, alerts and direct messages, ...)
}

// String says it in words, for /ticket why and rules why.
func (h Held) String() string {
	if h.Cap == CapQueue {
		return fmt.Sprintf("queued in the cycle of %s (class: %s): the request budget of the cycle ran out before its turn; fires in a later cycle, more urgent work first", Stamp(h.At), h.Class)
	}
	what := fmt.Sprintf("the rule's max_firings_per_cycle (%d)", h.Limit)
	if h.Cap == CapCycle {
		what = fmt.Sprintf("the cap of %d firings per cycle across rules", h.Limit)
	}
	return fmt.Sprintf("held back by %s in the cycle of %s; fires in a later cycle", what, Stamp(h.At))
}

// Why a decision can be held back: the caps, and the queue.
const (
	CapRule  = "rule"
	CapCycle = "cycle"
	CapQueue = "queue"
)

// RuleCap is r's max_firings_per_cycle (the default for a rule built
// without the loader).
func RuleCap(r *rules.Rule) int {
	if r == nil || r.MaxFiringsPerCycle <= 0 {
		return rules.DefaultMaxFiringsPerCycle
	}
	return r.MaxFiringsPerCycle
}

// GroupOver is r's group_over (the default for a rule built without the
// loader).
func GroupOver(r *rules.Rule) int {
	if r.GroupOver <= 0 {
		return rules.DefaultGroupOver
	}
	return r.GroupOver
}

// Admission is what storm control decided for a cycle's decisions.
type Admission struct {
	Admitted map[rules.FiringKey]bool  // decisions the cycle executes
	Held     map[string]map[int64]Held // decisions held back by a cap, by rule and ticket
	Failed   []rules.Decision          // decisions whose rule failed
	Fired    []rules.Decision          // decisions the ledger shows fired already
	PerRule  map[string]int            // admitted, by rule
	Total    int                       // admitted
	Grouping map[string]bool           // rules whose alerts are grouped in this cycle
	// PageGrouping are the rules whose pages this cycle starts without
	// their first step; the cycle then ticks the escalator once, which
	// sends one direct message per person for them all.
	PageGrouping map[string]bool
}

// admit chooses the decisions the cycle executes: not failed, not already
// fired per the ledger, and within the caps, in the queue's order (see
// order: firings under way first, then by class, ticket priority and
// age), and the rules whose alerts and pages are grouped. Pure.
func admit(in Input, ordered []rules.Decision) Admission {
	adm := Admission{Admitted: map[rules.FiringKey]bool{}, Held: map[string]map[int64]Held{}, PerRule: map[string]int{},
		Grouping: map[string]bool{}, PageGrouping: map[string]bool{}}
	for _, d := range ordered {
		adm.consider(in, d)
	}
	for name, n := range adm.PerRule {
		r := in.Set.Rule(name)
		if r == nil || n <= GroupOver(r) {
			continue
		}
		kinds := r.ActionKinds()
		if slices.Contains(kinds, rules.ActionPage) {
			adm.PageGrouping[name] = true
		}
		if in.Groups && slices.Contains(kinds, rules.ActionAlert) {
			adm.Grouping[name] = true
		}
	}
	return adm
}

// consider admits d unless it failed, was admitted already, the ledger
// shows it fired, or a cap holds it back (noted in held).
func (adm *Admission) consider(in Input, d rules.Decision) {
	key := Key(d)
	switch {
	case d.Err != nil:
		adm.Failed = append(adm.Failed, d)
		return
	case adm.Admitted[key]:
		return
	case in.Ledger.AlreadyFired(d, in.Now):
		adm.Fired = append(adm.Fired, d)
		return
	}
	limit, over := RuleCap(in.Set.Rule(d.Rule)), ""
	switch {
	case adm.PerRule[d.Rule] >= limit:
		over = CapRule
	case in.CycleCap > 0 && adm.Total >= in.CycleCap:
		over, limit = CapCycle, in.CycleCap
	}
	if over != "" {
		if adm.Held[d.Rule] == nil {
			adm.Held[d.Rule] = map[int64]Held{}
		}
		adm.Held[d.Rule][d.TicketID] = Held{At: in.Now, Cap: over, Limit: limit, Class: ClassOf(in.Set.Rule(d.Rule)).String()}
		return
	}
	adm.Admitted[key] = true
	adm.PerRule[d.Rule]++
	adm.Total++
}

// Stamp is t as /ticket why and rules why print times: RFC 3339 in UTC, "-" for none.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// MergeHeld is what the caps held back and what the queue left for
// later, by rule and ticket.
func MergeHeld(capped, queued map[string]map[int64]Held) map[string]map[int64]Held {
	out := make(map[string]map[int64]Held, len(capped)+len(queued))
	for _, m := range []map[string]map[int64]Held{capped, queued} {
		for rule, ids := range m {
			if out[rule] == nil {
				out[rule] = map[int64]Held{}
			}
			maps.Copy(out[rule], ids)
		}
	}
	return out
}

// HeldMemory keeps, per rule, the decisions its last cycle held back (by
// a cap or the queue), for the explainer and the status pages. The zero
// value is ready; it is safe for concurrent use.
type HeldMemory struct {
	mu    sync.Mutex
	rules map[string]map[int64]Held
}

// Note replaces what is kept of the rules due by what their cycle held
// back.
func (m *HeldMemory) Note(due []*rules.Rule, held map[string]map[int64]Held) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rules == nil {
		m.rules = map[string]map[int64]Held{}
	}
	for _, r := range due {
		if len(held[r.Name]) == 0 {
			delete(m.rules, r.Name)
			continue
		}
		m.rules[r.Name] = held[r.Name]
	}
}

// HeldBack reports whether the last cycle of key's rule held the decision
// on key's ticket back, and why.
func (m *HeldMemory) HeldBack(key rules.FiringKey) (Held, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.rules[key.Rule][key.TicketID]
	return h, ok
}

// Tickets is HeldTickets of what is kept.
func (m *HeldMemory) Tickets() map[string][]HeldTicket {
	m.mu.Lock()
	defer m.mu.Unlock()
	return HeldTickets(m.rules)
}
