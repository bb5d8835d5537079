package backtest

import (
	"time"

	"github.com/deskbot/deskbot/rules"
)

// send records the admitted firings and what they would have sent, per
// rule in file order (the report is stable).
func (r *replay) send(admitted []rules.Decision, grouped map[string]bool, now time.Time) {
	sent := map[string]*send{}
	for _, d := range admitted {
		r.record(d, now)
		s := sent[d.Rule]
		if s == nil {
			s = &send{rule: d.Rule, at: now}
			sent[d.Rule] = s
		}
		s.Firings++
		s.count(r.kinds[r.ruleIndex(d.Rule)], grouped[d.Rule])
	}
	for i, rule := range r.rules {
		s := sent[rule.Name]
		if s == nil {
			continue
		}
		if grouped[rule.Name] { // one message per alert action for them all
			s.Messages += alertActions(rule)
		}
		// The report sums a rule's sends by day: one per rule and day is
		// enough (a month of cycles would keep a million).
		if j := r.lastSend[i]; j > 0 && sameDay(r.sends[j-1].at, now) {
			r.sends[j-1].add(s.Totals)
			continue
		}
		r.sends = append(r.sends, *s)
		r.lastSend[i] = len(r.sends)
	}
}

// sameDay is whether a and b fall on the same UTC day, as the report's days.
func sameDay(a, b time.Time) bool {
	ay, am, ad := a.UTC().Date()
	by, bm, bd := b.UTC().Date()
	return ay == by && am == bm && ad == bd
}

// record enters d's firing at now into the ledger, opening an episode
// when none is open, and takes the decision out of the queue.
func (r *replay) record(d rules.Decision, now time.Time) {
	ns := now.UnixNano()
	s := r.slots[d.TicketID]
	rs := r.rs[r.ruleIndex(d.Rule)]
	st := rs.state(s)
	if !st.epOpen {
		st.episode++
		st.epOpen = true
	}
	st.claimed, st.firedAt = true, ns
	st.hasWaiting = false // it no longer waits
	since := st.streak
	if since == 0 {
		since = ns
	}
	if r.supervisor {
		r.sup.add(int32(rs.i), s, ns)
		r.requeue(rs, s, ns)
		return
	}
	r.fired.add(ns, fired{rule: int32(rs.i), episode: st.episode, slot: s, since: since})
	r.requeue(rs, s, ns)
}

// ruleIndex is the place in the file of the rule named name.
func (r *replay) ruleIndex(name string) int {
	i, ok := r.ruleIdx[name]
	if !ok {
		panic("backtest: no rule " + name)
	}
	return i
}

// count adds one firing's actions, by their kinds (a firing renders them
// all or fails); a grouped rule's alerts go in one message, counted once
// for the cycle.
func (s *send) count(kinds []rules.ActionKind, grouped bool) {
	for _, k := range kinds {
		switch k {
		case rules.ActionAlert:
			if !grouped {
				s.Messages++
			}
		case rules.ActionDM:
			s.Messages++
		case rules.ActionPage:
			s.Pages++
		case rules.ActionReply:
			s.Replies++
		case rules.ActionNote:
			s.Notes++
		case rules.ActionUpdate:
			s.Updates++
		}
	}
}

// alertActions is how many alert actions rule has.
func alertActions(rule *rules.Rule) int {
	n := 0
	for _, k := range rule.ActionKinds() {
		if k == rules.ActionAlert {
			n++
		}
	}
	return n
}
