package rules

import (
	"fmt"
	"math"

	"github.com/expr-lang/expr/ast"
)

// costCheck computes an upper bound of the steps an expression takes.
type costCheck struct {
	vars  []costVar
	preds []predScope
	err   *exprError
}

type costVar struct {
	name string
	val  *cost
}

type predScope struct {
	item *cost // the value of #
	acc  *cost // #acc of reduce
}

// fail records the first problem; the node costs +Inf.
func (c *costCheck) fail(n ast.Node, format string, args ...any) *cost {
	if c.err == nil {
		c.err = &exprError{Off: startOf(n), Msg: fmt.Sprintf(format, args...)}
	}
	return &cost{steps: math.Inf(1), kind: kScalar}
}

// visit returns the cost of evaluating n, and what its value is.
func (c *costCheck) visit(n ast.Node) *cost {
	if v, ok := literalCost(n); ok {
		return v
	}
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return c.identifier(n)
	case *ast.PointerNode:
		return c.pointer(n)
	case *ast.UnaryNode:
		return c.unary(n)
	case *ast.BinaryNode:
		return c.binary(n)
	case *ast.ChainNode:
		return c.visit(n.Node)
	case *ast.MemberNode:
		return c.member(n)
	case *ast.SliceNode:
		return c.slice(n)
	case *ast.CallNode:
		return c.call(n)
	case *ast.BuiltinNode:
		return c.builtin(n)
	case *ast.PredicateNode:
		return c.visit(n.Node)
	case *ast.VariableDeclaratorNode:
		return c.declaration(n)
	case *ast.SequenceNode:
		return c.sequence(n)
	case *ast.ConditionalNode:
		return c.conditional(n)
	case *ast.ArrayNode:
		return c.array(n)
	case *ast.MapNode:
		return c.mapping(n)
	case *ast.PairNode:
		k, v := c.visit(n.Key), c.visit(n.Value)
		return v.value().withCost(k, v)
	}
	// A node this check does not know: it cannot say what it costs.
	return c.fail(n, "cannot bound the cost of %s", srcText(n))
}

// literalCost is the value of a literal (nil when n is none), which costs
// nothing to evaluate.
func literalCost(n ast.Node) (*cost, bool) {
	switch n := n.(type) {
	case nil:
		return scalarCost(), true
	case *ast.NilNode, *ast.FloatNode, *ast.BoolNode, *ast.ConstantNode:
		return scalarCost(), true
	case *ast.IntegerNode:
		x := float64(n.Value)
		return &cost{kind: kScalar, num: &x}, true
	case *ast.StringNode:
		return &cost{kind: kText, size: float64(len(n.Value)), text: srcText(n)}, true
	case *ast.BytesNode:
		return &cost{kind: kText, size: float64(len(n.Value)), text: srcText(n)}, true
	}
	return nil, false
}

// unary is the cost of -x, +x or !x; a constant stays known.
func (c *costCheck) unary(n *ast.UnaryNode) *cost {
	v := c.visit(n.Node)
	out := scalarCost().withCost(v)
	if v.num != nil && (n.Operator == "-" || n.Operator == "+") {
		x := *v.num
		if n.Operator == "-" {
			x = -x
		}
		out.num = &x
	}
	return out
}

// slice is the cost of x[from:to]: a list no longer than x, nor than
// to-from when both are constants.
func (c *costCheck) slice(n *ast.SliceNode) *cost {
	v, from, to := c.visit(n.Node), c.visit(n.From), c.visit(n.To)
	out := v.value().withCost(v, from, to)
	out.num = nil
	if out.kind == kList && from.num != nil && to.num != nil {
		out.size = min(out.size, max(0, *to.num-*from.num))
	}
	return out
}

// call is the cost of calling one of deskbot's functions: its arguments,
// and has_tag's walk through the ticket's tags.
func (c *costCheck) call(n *ast.CallNode) *cost {
	vs := []*cost{c.visit(n.Callee)}
	for _, a := range n.Arguments {
		vs = append(vs, c.visit(a))
	}
	out := scalarCost().withCost(vs...)
	if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "has_tag" {
		out.steps += ListBound // it walks the ticket's tags
	}
	return out
}

// declaration is the cost of let x = v; e: x has v's value in e.
func (c *costCheck) declaration(n *ast.VariableDeclaratorNode) *cost {
	v := c.visit(n.Value)
	c.vars = append(c.vars, costVar{name: n.Name, val: v.value()})
	e := c.visit(n.Expr)
	c.vars = c.vars[:len(c.vars)-1]
	return e.value().withCost(v, e)
}

// sequence is the cost of a; b; c, whose value is the last's.
func (c *costCheck) sequence(n *ast.SequenceNode) *cost {
	if len(n.Nodes) == 0 {
		return scalarCost()
	}
	vs := make([]*cost, len(n.Nodes))
	for i, x := range n.Nodes {
		vs[i] = c.visit(x)
	}
	return vs[len(vs)-1].value().withCost(vs...)
}

// conditional is the cost of cond ? a : b: the condition and the dearer
// branch; the value may be either.
func (c *costCheck) conditional(n *ast.ConditionalNode) *cost {
	cond, a, b := c.visit(n.Cond), c.visit(n.Exp1), c.visit(n.Exp2)
	branch := a
	if b.steps > a.steps {
		branch = b
	}
	return unionCost(a, b).withCost(cond, branch)
}

// array is the cost of a list literal [a, b].
func (c *costCheck) array(n *ast.ArrayNode) *cost {
	out := &cost{kind: kList, size: float64(len(n.Nodes)), text: srcText(n)}
	vs := make([]*cost, len(n.Nodes))
	for i, x := range n.Nodes {
		vs[i] = c.visit(x)
		out.elem = c.union(out.elem, vs[i])
	}
	return out.withCost(vs...)
}

// mapping is the cost of a map literal {k: v}.
func (c *costCheck) mapping(n *ast.MapNode) *cost {
	out := &cost{kind: kMap, size: float64(len(n.Pairs)), text: srcText(n)}
	var vs []*cost
	for _, p := range n.Pairs {
		v := c.visit(p)
		vs = append(vs, v)
		out.elem = c.union(out.elem, v)
	}
	return out.withCost(vs...)
}

// union is unionCost where a may be nil (no item yet).
func (c *costCheck) union(a, b *cost) *cost {
	if a == nil {
		return b.value()
	}
	return unionCost(a, b)
}

func (c *costCheck) identifier(n *ast.IdentifierNode) *cost {
	for i := len(c.vars) - 1; i >= 0; i-- {
		if c.vars[i].name == n.Value {
			v := c.vars[i].val.value()
			v.text = n.Value
			return v
		}
	}
	if code, ok := namedCodes[n.Value]; ok {
		x := float64(code)
		return &cost{kind: kScalar, num: &x}
	}
	switch n.Value {
	case "ticket":
		return &cost{kind: kTicket, text: "ticket"}
	case "$env":
		return &cost{kind: kEnv, text: "$env"}
	}
	return scalarCost()
}

func (c *costCheck) pointer(n *ast.PointerNode) *cost {
	if len(c.preds) == 0 {
		return scalarCost()
	}
	p := c.preds[len(c.preds)-1]
	switch n.Name {
	case "":
		return p.item.value()
	case "index":
		return scalarCost()
	case "acc":
		if p.acc != nil {
			return p.acc.value()
		}
	}
	return &cost{kind: kUnbound, text: "#" + n.Name, why: "an unknown pointer"}
}

func (c *costCheck) member(n *ast.MemberNode) *cost {
	base, prop := c.visit(n.Node), c.visit(n.Property)
	var out *cost
	switch base.kind {
	case kTicket, kData:
		// Every field of the ticket is ticket data: its tags, its
		// custom_fields and their values, its texts split into words.
		out = ticketData(srcText(n))
	case kEnv:
		if s, ok := n.Property.(*ast.StringNode); ok && s.Value == "ticket" {
			out = &cost{kind: kTicket, text: srcText(n)}
		} else {
			out = ticketData(srcText(n))
		}
	default:
		out = base.items()
	}
	return out.withCost(base, prop)
}

// binary is the cost of a binary operation: ranges and in walk through a
// list, + may join lists or texts, arithmetic keeps constants known.
func (c *costCheck) binary(n *ast.BinaryNode) *cost {
	l, r := c.visit(n.Left), c.visit(n.Right)
	out := scalarCost().withCost(l, r)
	switch n.Operator {
	case "..":
		return c.rangeCost(n, l, r)
	case "in", "not in":
		steps, chain, ok := c.walkCost(n.Operator, []ast.Node{n.Right}, []*cost{r})
		if !ok {
			return out
		}
		out.withCost(&cost{steps: steps, chain: chain}, l)
	case "+":
		out = plusCost(n, l, r, out)
	case "-", "*":
		if l.num != nil && r.num != nil {
			x := *l.num - *r.num
			if n.Operator == "*" {
				x = *l.num * *r.num
			}
			out.num = &x
		}
	case "??":
		out = unionCost(l, r).withCost(l, r)
	}
	return out
}

// rangeCost is the cost of l..r: a list of r-l+1 numbers, made one by
// one; both bounds must be constants.
func (c *costCheck) rangeCost(n *ast.BinaryNode, l, r *cost) *cost {
	if l.num == nil || r.num == nil {
		return c.fail(n, "the range %s has a bound that is not a constant, so its cost per ticket has no bound: write constant bounds, e.g. 1..10", srcText(n))
	}
	size := max(0, *r.num-*l.num+1)
	out := (&cost{kind: kList, size: size, elem: scalarCost(), text: srcText(n)}).withCost(l, r)
	if size > out.steps {
		out.chain = []loopStep{{what: "the range " + srcText(n), n: size, off: startOf(n)}}
	}
	out.steps += size
	return out
}

// plusCost is the cost of l + r (out is that of a number): lists joined,
// texts joined, or numbers added.
func plusCost(n *ast.BinaryNode, l, r, out *cost) *cost {
	switch {
	case (l.kind == kList || r.kind == kList) && l.walked() && r.walked():
		// Lists joined: ticket data counts as a list of ListBound items.
		ln, la, lok := l.bound()
		rn, ra, rok := r.bound()
		if !lok || !rok {
			out = &cost{kind: kUnbound, why: l.why + r.why}
		} else {
			out = &cost{kind: kList, size: ln + rn, assumed: la || ra, elem: unionCost(l.items(), r.items())}
		}
		out.text = srcText(n)
	case l.kind == kText && r.kind == kText:
		out = &cost{kind: kText, size: l.size + r.size, text: srcText(n), why: l.why + r.why}
	case l.kind == kUnbound || r.kind == kUnbound || l.kind == kData || r.kind == kData:
		out = unionCost(l, r)
		out.text = srcText(n)
	}
	out.withCost(l, r)
	if l.num != nil && r.num != nil {
		x := *l.num + *r.num
		out.num = &x
	}
	return out
}

// walkCost adds to the steps of evaluating a function's arguments args
// (at, in the tree) those of walking once through the items of each list
// among them, as function name does.
func (c *costCheck) walkCost(name string, at []ast.Node, args []*cost) (float64, []loopStep, bool) {
	steps, chain := addCosts(args...)
	var walked float64
	var top loopStep
	for i, a := range args {
		if !a.walked() {
			continue
		}
		n, assumed, ok := a.bound()
		if !ok {
			c.fail(at[i], "%s: %s has no size the loader can bound (%s)", name, a.label(), a.why)
			return math.Inf(1), nil, false
		}
		walked += n
		if n > top.n {
			top = loopStep{what: name + " over " + a.label(), n: n, assumed: assumed, off: startOf(at[i])}
		}
	}
	if top.n > 0 && top.n >= steps {
		chain = []loopStep{top}
	}
	return steps + walked, chain, true
}
