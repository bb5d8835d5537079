package backtest

// The queue's two orders within a rule, as heaps with lazy deletion.

import "cmp"

// entry is a decision in a heap, with what orders it.
type entry struct {
	since, born, id int64 // since: never for a failed one that never waited
	prio            int
	slot            int32
	gen             uint32
}

// Within one rule, class and file place are equal: the urgency order is
// ticket priority (urgent first), then age; the age order is since, the
// ticket's creation, its id.
func urgencyLess(a, b *entry) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return ageLess(a, b)
}

func ageLess(a, b *entry) bool {
	return cmp.Or(cmp.Compare(a.since, b.since), cmp.Compare(a.born, b.born), cmp.Compare(a.id, b.id)) < 0
}

// heap is a binary min-heap of entries; stale entries (another gen) are
// dropped when they come to the top. Without less it is a plain list,
// never popped.
type heap struct {
	es   []entry
	less func(a, b *entry) bool
}

func (h *heap) push(e entry) {
	h.es = append(h.es, e)
	if h.less == nil { // a plain list (the supervisor's)
		return
	}
	for j := len(h.es) - 1; j > 0; {
		p := (j - 1) / 2
		if !h.less(&h.es[j], &h.es[p]) {
			break
		}
		h.es[p], h.es[j] = h.es[j], h.es[p]
		j = p
	}
}

func (h *heap) pop() entry {
	es := h.es
	top := es[0]
	last := len(es) - 1
	es[0] = es[last]
	es = es[:last]
	for j := 0; ; {
		l, m := 2*j+1, j
		if l < len(es) && h.less(&es[l], &es[m]) {
			m = l
		}
		if l+1 < len(es) && h.less(&es[l+1], &es[m]) {
			m = l + 1
		}
		if m == j {
			break
		}
		es[j], es[m] = es[m], es[j]
		j = m
	}
	h.es = es
	return top
}

// live is whether e is the rule's current entry for its ticket.
func (rs *ruleState) live(e *entry) bool {
	st := rs.state(e.slot)
	return st.inQ && st.gen == e.gen
}

// compact drops the stale entries of a heap grown to twice its live ones (a ticket whose answer is asked for again and again).
func (rs *ruleState) compact(h *heap, live int) {
	if len(h.es) < 1024 || len(h.es) < 2*live {
		return
	}
	es := h.es[:0]
	for _, e := range h.es {
		if rs.live(&e) {
			es = append(es, e)
		}
	}
	h.es = h.es[:0]
	for _, e := range es {
		h.push(e)
	}
}
