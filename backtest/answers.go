package backtest

// What a rule's answer on a ticket needs besides its verdict: whether
// the decision's actions render, and since when the ticket matched.

import (
	"sort"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// checkRender checks, once per version of the ticket in slot s, the
// actions of the rules whose verdicts make a decision the queue would
// take in (it holds, did not fail, the ledger lets it fire): a decision
// whose actions fail to render is a failed one, never held back nor
// counted, as in the scheduler's Evaluate, which renders them all;
// verdicts need not render. One call for all of the ticket's rules.
func (r *replay) checkRender(ks []int32, s int32, vs []verdict, now time.Time) {
	due, idx := r.render[:0], r.renderIdx[:0]
	for n, k := range ks {
		rs := r.rs[k]
		st := rs.state(s)
		if !vs[n].Holds || vs[n].Err != nil || st.renderChecked == r.ver[s] {
			continue
		}
		if at, ok := rs.rule.Once.NextEligible(st.record()); !ok || at.After(now) {
			continue
		}
		st.renderChecked, st.renderBad = r.ver[s], false
		due, idx = append(due, rs.rule), append(idx, k)
	}
	r.render, r.renderIdx = due, idx
	if len(due) == 0 {
		return
	}
	r.errs = r.set.RenderErrsWith(&r.vbuf, due, r.tickets[s], now, r.errs)
	for n, err := range r.errs {
		if err != nil {
			r.rs[idx[n]].state(s).renderBad = true
		}
	}
}

// renders is whether rs's actions render on the ticket in slot s at now.
func (r *replay) renders(rs *ruleState, s int32, now time.Time) bool {
	r.one[0] = rs.rule
	r.errs = r.set.RenderErrsWith(&r.vbuf, r.one[:], r.tickets[s], now, r.errs)
	return r.errs[0] == nil
}

// matchSince is when the ticket in slot s began to match rule, found
// matching at now: the moment its current version was recorded if it
// matched then, else (a condition on time, such as now() -
// ticket.created_at > duration("1h")) the first second after which it
// matched, found by bisection; never before the rule's previous run,
// which saw it not matching. The same probes as a plain bisection, but
// none is evaluated where the answer is known: at any time when the rule
// does not read now() (it holds now, on this version), before quiet
// (unix ns), until when the last verdict on this version, at an earlier
// run, said it did not hold.
func (r *replay) matchSince(rule *rules.Rule, prev time.Time, s int32, now time.Time, quiet int64) time.Time {
	t := r.tickets[s]
	lo := plan.Later(time.Unix(0, r.at[s]).UTC(), prev)
	if !lo.Before(now) {
		return now
	}
	timeless := !rule.ReadsNow()
	holds := func(at time.Time) bool {
		if timeless {
			return true
		}
		if at.UnixNano() < quiet {
			return false
		}
		r.one[0] = rule // a decision, failed or not, without rendering it
		r.vs1 = verdicts(r.set, &r.vbuf, r.one[:], t, at, r.vs1)
		return r.vs1[0].Holds
	}
	if holds(lo) {
		return lo
	}
	// Bisect over whole seconds after lo: the answer is the last second
	// at which it did not hold yet (a strict "> 30m" holds just after).
	n := int64((now.Sub(lo) + time.Second - 1) / time.Second) // holds at lo+n s (now, or past it)
	k := sort.Search(int(n), func(k int) bool { return holds(lo.Add(time.Duration(k+1) * time.Second)) })
	return lo.Add(time.Duration(k) * time.Second)
}
