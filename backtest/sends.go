package backtest

import (
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// send records the admitted firings and what they would have sent, per
// rule in file order (the report is stable).
func (r *replay) send(admitted []rules.Decision, grouped map[string]bool, now time.Time) {
	sent := map[string]*send{}
	for _, d := range admitted {
		f := r.record(d, now)
		r.firings = append(r.firings, f)
		delete(r.waiting, plan.Key(d))
		s := sent[d.Rule]
		if s == nil {
			s = &send{rule: d.Rule, at: now}
			sent[d.Rule] = s
		}
		s.Firings++
		s.count(d.Actions, grouped[d.Rule])
	}
	for _, rule := range r.rules {
		s := sent[rule.Name]
		if s == nil {
			continue
		}
		if grouped[rule.Name] { // one message per alert action for them all
			s.Messages += alertActions(rule)
		}
		r.sends = append(r.sends, *s)
	}
}

// count adds one firing's actions; a grouped rule's alerts go in one
// message, counted once for the cycle.
func (s *send) count(as []rules.Action, grouped bool) {
	for _, a := range as {
		switch a.Kind {
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
