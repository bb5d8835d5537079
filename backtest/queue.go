package backtest

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// The incremental queue. A cycle's plan (plan.Make) orders its decisions
// by merging two lists (plan.Order): the urgency list (class, ticket
// priority, then age) and the age list (since when a decision waits, the
// ticket's creation, its id, the rule's place in the file); every
// RoutineShare-th place goes to the first decision of the age list not
// yet placed, the others to the urgency list's. Storm control then admits
// them in that order while the rule's cap and the cycle's cap allow.
//
// Only the head of that merged order matters: once the cycle's cap is
// reached, or every rule that still has decisions to place has reached
// its own cap, no later decision can be admitted, and each is held back.
// So each rule keeps its open decisions (the ticket matches, the ledger
// lets it fire) in heaps by both orders, the cycle merges the due rules'
// heaps lazily, as plan.Order would merge the whole lists, and stops
// there. The decisions it placed are a prefix of the whole merged order,
// and plan.Order over a prefix of its own output gives that prefix back
// in the same order (the first decision not yet placed of either list is,
// at each place, in the prefix), so plan.Make over the prefix admits what
// it would have admitted over the whole backlog; the decisions left out
// are counted as held back, as plan.Make would have held them.
//
// Handing plan.Make only each rule's first RuleCap decisions by both
// orders would not do: with a cap across rules, the decisions left out
// would no longer take their places in the merge, every RoutineShare-th
// place would fall elsewhere, and another decision would take the
// cycle's last admissions. The prefix keeps every place.
//
// Failed decisions (the if failed) take their places in the order too,
// and never count against a cap. A decision that never waited sorts as
// waiting since now: those of the cycle's new decisions that are not
// admitted are noted as waiting since now, as the scheduler's queue does,
// so the rule's heaps keep them at their place; failed ones never wait,
// and sort at now in every cycle, so they have heaps of their own.

// requeue puts slot s into the rule's heaps, or leaves it out, as its
// state now says: open when the ticket matches and the ledger lets a
// firing win at now (else a timer for when it will, under once: every).
func (r *replay) requeue(rs *ruleState, s int32, ns int64) {
	st := rs.state(s)
	if st.inQ {
		st.inQ = false
		if !st.qFailed {
			rs.pending--
		}
		if st.inF {
			rs.inF--
		}
	}
	st.gen++
	if !st.holds {
		return
	}
	at, ok := rs.rule.Once.NextEligible(st.record())
	if !ok {
		return
	}
	if !at.IsZero() && at.UnixNano() > ns {
		rs.setTimer(s, at.UnixNano())
		return
	}
	t := r.tickets[s]
	if !st.failed && st.renderChecked != st.seen && !r.supervisor { // a new version after a timer (once: every)
		st.renderChecked, st.renderBad = st.seen, false
		if !r.renders(rs, s, time.Unix(0, ns)) {
			st.failRender()
		}
	}
	st.inQ, st.qFailed, st.inF = true, st.failed, false
	if !st.failed {
		rs.pending++
		if !st.hasWaiting { // a new decision: held back, it waits since now
			st.hasWaiting, st.waiting = true, ns
		}
	}
	e := entry{prio: t.Priority, born: t.CreatedAt.UnixNano(), id: t.ID, slot: s, gen: st.gen, since: never}
	st.qVer = r.ver[s]
	if st.hasWaiting {
		e.since = st.waiting
		rs.uw.push(e)
		rs.compact(&rs.uw, rs.pending)
		if !r.supervisor { // the supervisor fires them all: one list will do (fireAll)
			rs.aw.push(e)
			rs.compact(&rs.aw, rs.pending)
		}
		return
	}
	st.inF = true
	rs.inF++
	rs.uf.push(e)
	rs.compact(&rs.uf, rs.inF)
	if !r.supervisor {
		rs.af.push(e)
		rs.compact(&rs.af, rs.inF)
	}
}

// source is one heap of one rule, merged with the others.
type source struct {
	rs   *ruleState
	h    *heap
	head entry
}

// merger merges the due rules' heaps of one order lazily, as plan.Order
// sorts the whole list: by class, priority and age (urgency), or by age.
type merger struct {
	urgency bool
	now     int64
	srcs    []source
	top     []int // a heap of srcs by head
}

func (m *merger) since(e *entry) int64 { return min(e.since, m.now) }

func (m *merger) less(a, b int) bool {
	x, y := &m.srcs[a], &m.srcs[b]
	if m.urgency {
		if x.rs.cls != y.rs.cls {
			return x.rs.cls < y.rs.cls
		}
		if x.head.prio != y.head.prio {
			return x.head.prio > y.head.prio
		}
	}
	return cmp.Or(cmp.Compare(m.since(&x.head), m.since(&y.head)), cmp.Compare(x.head.born, y.head.born),
		cmp.Compare(x.head.id, y.head.id), cmp.Compare(x.rs.i, y.rs.i)) < 0
}

// reset empties m for a cycle at now.
func (m *merger) reset(urgency bool, now int64) {
	m.urgency, m.now, m.srcs, m.top = urgency, now, m.srcs[:0], m.top[:0]
}

// add adds a rule's heap as a source.
func (m *merger) add(rs *ruleState, h *heap) {
	m.srcs = append(m.srcs, source{rs: rs, h: h})
	if m.advance(len(m.srcs) - 1) {
		m.up(len(m.top))
	}
}

// advance makes the first live entry of source i's heap its head, left
// at the top of the heap (the stale ones above it go) until next takes
// it: a head never taken stays in its heap as it was; false when the
// heap has none.
func (m *merger) advance(i int) bool {
	src := &m.srcs[i]
	for len(src.h.es) > 0 {
		if e := src.h.es[0]; src.rs.live(&e) {
			src.head = e
			m.top = append(m.top, i)
			return true
		}
		src.h.pop()
	}
	return false
}

func (m *merger) up(j int) {
	j--
	for j > 0 {
		p := (j - 1) / 2
		if !m.less(m.top[j], m.top[p]) {
			break
		}
		m.top[p], m.top[j] = m.top[j], m.top[p]
		j = p
	}
}

func (m *merger) down() {
	h := m.top
	for j := 0; ; {
		l, k := 2*j+1, j
		if l < len(h) && m.less(h[l], h[k]) {
			k = l
		}
		if l+1 < len(h) && m.less(h[l+1], h[k]) {
			k = l + 1
		}
		if k == j {
			return
		}
		h[j], h[k] = h[k], h[j]
		j = k
	}
}

// next is the next decision of the order not yet placed in this cycle.
func (m *merger) next(stamp uint32) (*ruleState, int32, bool) {
	for len(m.top) > 0 {
		i := m.top[0]
		src := &m.srcs[i]
		rs, s := src.rs, src.head.slot
		last := len(m.top) - 1
		m.top[0] = m.top[last]
		m.top = m.top[:last]
		m.down()
		src.h.pop() // the head, still at the top: nothing pushes during the plan
		rs.popped = append(rs.popped, s)
		if m.advance(i) {
			m.up(len(m.top))
		}
		if st := rs.state(s); st.stamp != stamp {
			st.stamp = stamp
			return rs, s, true
		}
	}
	return nil, 0, false
}

// errPlan is a plan.Make that admitted a decision the engine did not
// expect: the engine's reading of the queue is wrong.
var errPlan = errors.New("backtest: the plan admitted a decision the replay did not place first")

// plan runs the planning step of a cycle over the due rules' open
// decisions and fires what it admits; it returns the rules a cap held
// back.
func (r *replay) plan(dueIdx []int, now time.Time) (map[int]bool, error) {
	ns := now.UnixNano()
	stamp := stampOf(r.cycles, phaseTaken)
	u, a, active := r.mergers(dueIdx, ns)
	prefix, rendered, since := r.prefix[:0], r.rendered, r.since // the cycle's, reused
	if rendered == nil {
		rendered, since = map[rules.FiringKey]bool{}, map[rules.FiringKey]time.Time{}
		r.rendered, r.since = rendered, since
	}
	clear(rendered)
	clear(since)
	defer func() { r.prefix = prefix[:0] }()
	total := 0
	for active > 0 && (r.cfg.cycleCap <= 0 || total < r.cfg.cycleCap) {
		m := u
		if (len(prefix)+1)%plan.RoutineShare == 0 {
			m = a
		}
		rs, s, ok := m.next(stamp)
		if !ok {
			break
		}
		st := rs.state(s)
		t := r.tickets[s]
		d := rules.Decision{Rule: rs.rule.Name, Once: rs.rule.Once, TicketID: t.ID, Ticket: t}
		if st.hasWaiting {
			since[plan.Key(d)] = time.Unix(0, st.waiting)
		}
		if st.qFailed {
			d.Err = errFailed
			prefix = append(prefix, d)
			continue
		}
		wasActive := !rs.capped && rs.placed < rs.pending
		if !rs.capped {
			// within the caps (plan's consider): render it now, as the
			// scheduler's Evaluate would have; a failure fails it. What
			// it sends is counted by its actions' kinds (send), so their
			// text is not built.
			if r.renders(rs, s, now) {
				rendered[plan.Key(d)] = true
				rs.admitted++
				total++
				rs.capped = rs.admitted >= rs.cap
			} else {
				d.Err = errFailed
				st.failRender()
				if st.waiting == ns { // it never waited: failed ones do not
					st.hasWaiting = false
				}
				st.qFailed = true
				rs.pending--
				rs.placed--
			}
		}
		rs.placed++
		if wasActive && (rs.capped || rs.placed >= rs.pending) {
			active--
		}
		prefix = append(prefix, d)
	}
	p := plan.Make(plan.Input{Set: r.set, Now: now, Decisions: prefix, Since: since, CycleCap: r.cfg.cycleCap, Groups: true})
	admitted, err := admittedOf(p, rendered, total, now)
	if err != nil {
		return nil, err
	}
	r.send(admitted, p.Grouping, now)
	return r.holdRest(dueIdx, ns), nil
}

// mergers are the queue's two orders over the due rules' heaps (urgency,
// and age for every RoutineShare-th place), and how many due rules have
// open decisions; each rule's count of the cycle starts again.
func (r *replay) mergers(dueIdx []int, ns int64) (u, a *merger, active int) {
	u, a = &r.u, &r.a
	u.reset(true, ns)
	a.reset(false, ns)
	for _, i := range dueIdx {
		rs := r.rs[i]
		rs.placed, rs.admitted, rs.capped, rs.popped = 0, 0, false, rs.popped[:0]
		u.add(rs, &rs.uw)
		u.add(rs, &rs.uf)
		a.add(rs, &rs.aw)
		a.add(rs, &rs.af)
		if rs.pending > 0 {
			active++
		}
	}
	return u, a, active
}

// admittedOf are the decisions p admitted, in its order; an error when
// it admitted one the replay did not render as placed first, or not as
// many as the replay counted.
func admittedOf(p *plan.Plan, rendered map[rules.FiringKey]bool, total int, now time.Time) ([]rules.Decision, error) {
	var admitted []rules.Decision
	for _, d := range p.Ordered {
		if !p.Admitted[plan.Key(d)] {
			continue
		}
		if !rendered[plan.Key(d)] {
			return nil, fmt.Errorf("%w: %s on ticket %d at %s", errPlan, d.Rule, d.TicketID, plan.Stamp(now))
		}
		admitted = append(admitted, d)
	}
	if len(admitted) != total {
		return nil, fmt.Errorf("%w: %d admitted, %d expected at %s", errPlan, len(admitted), total, plan.Stamp(now))
	}
	return admitted, nil
}

// holdRest counts the due rules' decisions left in the queue as held
// back, puts them back in the heaps and returns the rules that had some.
func (r *replay) holdRest(dueIdx []int, ns int64) map[int]bool {
	held := map[int]bool{}
	for _, i := range dueIdx {
		rs := r.rs[i]
		n := rs.pending // fired ones left the queue: the rest wait
		if n > 0 {
			held[i] = true
			r.held[rs.rule.Name] += n
		}
		r.restore(rs, ns)
	}
	return held
}

// errFailed marks a failed decision for plan.Make.
var errFailed = errors.New("failed")

// restore puts back the decisions a cycle took out of the rule's heaps.
func (r *replay) restore(rs *ruleState, ns int64) {
	stamp := stampOf(r.cycles, phasePopped)
	for _, s := range rs.popped {
		st := rs.state(s)
		if st.stamp == stamp || !st.inQ {
			continue
		}
		st.stamp = stamp
		r.requeue(rs, s, ns)
	}
	rs.popped = rs.popped[:0]
}

// fireAll is the supervisor's cycle: every open decision of the due rules
// that does not fail fires, without caps.
func (r *replay) fireAll(dueIdx []int, now time.Time) error {
	ns := now.UnixNano()
	var admitted []rules.Decision
	for _, i := range dueIdx {
		rs := r.rs[i]
		for _, h := range []*heap{&rs.uw, &rs.uf} {
			for _, e := range h.es {
				st := rs.state(e.slot)
				if !rs.live(&e) || st.qFailed {
					continue
				}
				if !r.renders(rs, e.slot, now) {
					st.failRender()
					rs.popped = append(rs.popped, e.slot)
					continue
				}
				t := r.tickets[e.slot]
				admitted = append(admitted, rules.Decision{Rule: rs.rule.Name, Once: rs.rule.Once, TicketID: t.ID, Ticket: t})
			}
		}
	}
	r.send(admitted, nil, now)
	for _, i := range dueIdx {
		r.restore(r.rs[i], ns)
	}
	return nil
}
