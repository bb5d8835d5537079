package rules

import "github.com/deskbot/deskbot/sdclient/filter"

// qnode mirrors a rule's local query with each term replaced by its index
// in the set's table of distinct terms. Rules share terms (status:open,
// agent_id:0, ...), so a set evaluates each distinct term at most once per
// ticket, with filter's own Term.Eval semantics.
type qnode struct {
	op   qop
	term int // qTerm: index into Set.terms
	kids []qnode
}

type qop uint8

const (
	qTerm qop = iota
	qAnd
	qOr
)

// termTable interns the distinct terms of a set.
type termTable struct {
	terms []*filter.Term
	index map[string]int
}

func (tt *termTable) plan(e filter.Expr) qnode {
	switch e := e.(type) {
	case *filter.Term:
		key := e.String()
		i, ok := tt.index[key]
		if !ok {
			if tt.index == nil {
				tt.index = map[string]int{}
			}
			i = len(tt.terms)
			tt.terms = append(tt.terms, e)
			tt.index[key] = i
		}
		return qnode{op: qTerm, term: i}
	case *filter.And:
		n := qnode{op: qAnd}
		for _, x := range e.Exprs {
			n.kids = append(n.kids, tt.plan(x))
		}
		return n
	case *filter.Or:
		n := qnode{op: qOr}
		for _, x := range e.Exprs {
			n.kids = append(n.kids, tt.plan(x))
		}
		return n
	}
	return qnode{op: qAnd} // empty: true, as filter's empty And
}

// termCache remembers, for one ticket, the terms already evaluated.
type termCache struct {
	terms []*filter.Term
	state []uint8 // 0 unknown, 1 false, 2 true
	rec   *ticketRecord
}

func (c *termCache) reset(rec *ticketRecord) {
	c.rec = rec
	clear(c.state)
}

func (c *termCache) eval(n *qnode) bool {
	switch n.op {
	case qTerm:
		switch c.state[n.term] {
		case 1:
			return false
		case 2:
			return true
		}
		v := c.terms[n.term].Eval(c.rec)
		c.state[n.term] = 1
		if v {
			c.state[n.term] = 2
		}
		return v
	case qAnd:
		for i := range n.kids {
			if !c.eval(&n.kids[i]) {
				return false
			}
		}
		return true
	default:
		for i := range n.kids {
			if c.eval(&n.kids[i]) {
				return true
			}
		}
		return false
	}
}
