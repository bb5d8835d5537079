package rules

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// MaxSteps is the most work one expression (an if:, or one {{ }} of a
// text) may do on one ticket. A step is one item that a loop (all, any,
// filter, map, count, sum, reduce, ...) or a function walking a list (in,
// sort, join, concat, ...) goes through, or one number of a range. The
// loader refuses an expression whose cost it cannot bound under MaxSteps;
// at run time an expression whose loop bodies run more than MaxSteps times
// stops with ErrBudget.
const MaxSteps = 100_000

// ListBound is how many items the loader assumes of a list that comes from
// ticket data: the ticket's tags, a custom field's value, the keys or
// values of custom_fields, a ticket's text split into words. Should a
// ticket have more, the run-time budget still stops the expression.
const ListBound = 100

// ErrBudget is the error (test with errors.Is) of a rule whose expression
// went over its run-time budget on a ticket: its loops ran more than
// MaxSteps steps, or it allocated more than expr's memory budget
// (conf.DefaultMemoryBudget items). The decision carries it in Err.
var ErrBudget = errors.New("over the run-time budget")

// checkCost checks that the cost of the expression src, which compiled, is
// bounded by MaxSteps; it returns the problem otherwise, positioned by rune
// offset in src.
//
// The bound is computed on the parse tree: a range with constant bounds
// has their difference plus one items; a loop costs its collection's items
// times (1 + the cost of its predicate), so nested loops multiply; a
// function walking a list costs its items; a list from ticket data has
// ListBound items. A range whose bounds are not constants, and a list
// whose size cannot be bounded (the result of reduce, a text split that
// was built in the expression) walked by a loop, have no bound.
func checkCost(src string) *exprError {
	tree, err := parser.Parse(src)
	if err != nil {
		// It compiled with the environment's configuration, so it cannot
		// fail here; if it does, it does not run unchecked.
		e := toExprError(src, err)
		e.Msg = "cannot bound the cost of this expression: " + e.Msg
		return &e
	}
	c := &costCheck{}
	v := c.visit(tree.Node)
	if c.err != nil {
		return c.err
	}
	if v.steps <= MaxSteps {
		return nil
	}
	msg := fmt.Sprintf("this expression may take %s steps per ticket", thousands(v.steps))
	var loops []string
	assumed := false
	for _, s := range v.chain {
		loops = append(loops, fmt.Sprintf("%s: %s items", s.what, thousands(s.n)))
		assumed = assumed || s.assumed
	}
	if len(loops) > 0 {
		msg += " (" + strings.Join(loops, ", and for each item ") + ")"
	}
	msg += "; the limit is " + thousands(MaxSteps)
	if assumed {
		msg += fmt.Sprintf(", and a list from ticket data counts as %d items", ListBound)
	}
	off := 0
	if len(v.chain) > 0 {
		off = v.chain[0].off
	}
	return &exprError{Off: off, Msg: msg}
}

// thousands prints a number of steps or items with thousands separators.
func thousands(n float64) string {
	if n > 1e15 || math.IsNaN(n) {
		return "more than 1,000,000,000,000,000"
	}
	s := strconv.FormatFloat(math.Ceil(n), 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// valueKind is the shape of a value, as far as its cost is concerned.
type valueKind uint8

const (
	kScalar  valueKind = iota // a number, a bool, a time...: never walked
	kList                     // a list of size items
	kMap                      // a map of size entries
	kText                     // a string of size bytes (+Inf: unknown, why)
	kData                     // ticket data: ListBound items when walked
	kTicket                   // the ticket
	kEnv                      // $env
	kUnbound                  // a list whose size has no bound (why)
)

// cost is what the check knows of one node: the steps to evaluate it once
// and the value it yields.
type cost struct {
	steps float64
	chain []loopStep // the loops of the costliest path, outermost first

	kind    valueKind
	size    float64  // items of a list or map, bytes of a text
	assumed bool     // size counts lists of ticket data as ListBound items
	elem    *cost    // the items of a list or map
	text    string   // the value's source, for messages
	why     string   // why a kUnbound or a text of +Inf size has no bound
	num     *float64 // the value of a constant number
}

// loopStep is one loop (or walk, or range) of a chain, for messages.
type loopStep struct {
	what    string // "all() over xs", "the range 1..30000"
	n       float64
	assumed bool // n is ListBound, assumed of ticket data
	off     int  // rune offset of the loop in the expression
}

func scalarCost() *cost { return &cost{kind: kScalar} }

func ticketData(text string) *cost { return &cost{kind: kData, text: text} }

// value returns v's value without its cost.
func (v *cost) value() *cost {
	c := *v
	c.steps, c.chain = 0, nil
	return &c
}

// items returns the value of v's items.
func (v *cost) items() *cost {
	switch v.kind {
	case kList, kMap:
		if v.elem != nil {
			return v.elem.value()
		}
	case kData, kEnv:
		return ticketData(v.text)
	case kUnbound:
		return &cost{kind: kUnbound, why: v.why, text: v.text}
	}
	return scalarCost()
}

// bound returns the number of items of v when walked; ok is false when it
// has no bound.
func (v *cost) bound() (n float64, assumed, ok bool) {
	switch v.kind {
	case kList, kMap:
		return v.size, v.assumed, true
	case kData, kEnv:
		return ListBound, true, true
	case kUnbound:
		return 0, false, false
	}
	return 0, false, true
}

// walked reports whether a function given v walks through its items.
func (v *cost) walked() bool {
	return v.kind == kList || v.kind == kMap || v.kind == kData || v.kind == kUnbound
}

// label names v's source in a message.
func (v *cost) label() string {
	if v.text != "" {
		return v.text
	}
	return "a list"
}

// unionCost is a value that is a or b: the larger of each.
func unionCost(a, b *cost) *cost {
	var u *cost
	switch {
	case a.kind == kUnbound || a.kind == kData:
		u = a.value()
	case b.kind == kUnbound || b.kind == kData:
		u = b.value()
	case a.kind == b.kind && (a.kind == kList || a.kind == kMap || a.kind == kText):
		u = a.value()
		u.size = max(a.size, b.size)
		u.assumed = a.assumed || b.assumed
		if a.size < b.size {
			u.why = b.why
		}
		if a.elem != nil && b.elem != nil {
			u.elem = unionCost(a.elem, b.elem)
		} else if b.elem != nil {
			u.elem = b.elem
		}
	case a.kind == kScalar:
		u = b.value()
	default:
		u = a.value()
	}
	u.num = nil
	return u
}

// addCosts adds the steps of vs, keeping the chain of the costliest.
func addCosts(vs ...*cost) (float64, []loopStep) {
	var total, top float64
	var chain []loopStep
	for _, v := range vs {
		total += v.steps
		if v.steps > top {
			top, chain = v.steps, v.chain
		}
	}
	return total, chain
}

// withCost returns v with the steps and chain of evaluating vs.
func (v *cost) withCost(vs ...*cost) *cost {
	v.steps, v.chain = addCosts(vs...)
	return v
}

// mulSteps is a*b where anything times zero is zero, even an infinity (a
// loop over nothing never runs its body).
func mulSteps(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a * b
}

// startOf returns the rune offset where n's source starts (a binary node's
// own location is its operator's, a builtin's its name's).
func startOf(n ast.Node) int {
	s := &startVisitor{min: math.MaxInt}
	ast.Walk(&n, s)
	if s.min == math.MaxInt {
		return 0
	}
	return s.min
}

// startVisitor finds the least offset of a subtree.
type startVisitor struct{ min int }

// Visit implements ast.Visitor.
func (s *startVisitor) Visit(node *ast.Node) { s.min = min(s.min, (*node).Location().From) }

// srcText is n as source text, shortened for a message.
func srcText(n ast.Node) string { return shorten(n.String(), 40) }

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

// predicateBuiltins loop over their first argument, running their
// predicate (the second) on every item.
var predicateBuiltins = map[string]bool{
	"all": true, "none": true, "any": true, "one": true,
	"filter": true, "map": true, "count": true, "sum": true,
	"find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
	"groupBy": true, "sortBy": true, "reduce": true,
}

// notWalking builtins do not walk through a list they are given: they
// take texts and numbers, or take one item of a list. Every other builtin
// is counted as walking through each list it is given once.
var notWalking = map[string]bool{
	"len": true, "type": true, "first": true, "last": true, "get": true, "take": true,
	"trim": true, "trimPrefix": true, "trimSuffix": true, "upper": true, "lower": true,
	"split": true, "splitAfter": true, "replace": true, "repeat": true,
	"indexOf": true, "lastIndexOf": true, "hasPrefix": true, "hasSuffix": true,
	"toBase64": true, "fromBase64": true, "fromJSON": true,
	"abs": true, "ceil": true, "floor": true, "round": true, "int": true, "float": true,
	"now": true, "duration": true, "date": true, "timezone": true,
	"bitand": true, "bitor": true, "bitxor": true, "bitnand": true, "bitnot": true,
	"bitshl": true, "bitshr": true, "bitushr": true,
}

// textBuiltins return a text no longer than a few times their first
// argument's.
var textBuiltins = map[string]bool{
	"trim": true, "trimPrefix": true, "trimSuffix": true, "upper": true, "lower": true,
}

// collectionBuiltins return their first argument's items, in another
// order or shape.
var collectionBuiltins = map[string]bool{
	"keys": true, "values": true, "toPairs": true, "reverse": true,
	"uniq": true, "sort": true, "take": true, "fromPairs": true,
}

// builtin is the cost of a call of one of expr's builtins: its arguments,
// the walk through each list it is given (unless it is notWalking), and
// what its value is.
func (c *costCheck) builtin(n *ast.BuiltinNode) *cost {
	if predicateBuiltins[n.Name] && len(n.Arguments) >= 2 {
		if _, ok := n.Arguments[1].(*ast.PredicateNode); ok {
			return c.loop(n)
		}
	}
	args := make(builtinArgs, len(n.Arguments))
	for i, a := range n.Arguments {
		args[i] = c.visit(a)
	}
	steps, chain := addCosts(args...)
	if !notWalking[n.Name] {
		// A builtin walks each list it is given once (sort a little more,
		// which the margin of MaxSteps covers).
		var ok bool
		if steps, chain, ok = c.walkCost(n.Name+"()", n.Arguments, args); !ok {
			return scalarCost().withCost(args...)
		}
	}
	out := c.builtinValue(n.Name, args)
	out.text = srcText(n)
	out.steps, out.chain = steps, chain
	return out
}

// builtinArgs are the costs of a builtin's arguments.
type builtinArgs []*cost

// at returns argument i, a scalar when there is none.
func (a builtinArgs) at(i int) *cost {
	if i < len(a) {
		return a[i]
	}
	return scalarCost()
}

// anyData reports whether an argument is ticket data.
func (a builtinArgs) anyData() bool {
	for _, x := range a {
		if x.kind == kData || x.kind == kTicket || x.kind == kEnv {
			return true
		}
	}
	return false
}

// builtinValue is what builtin name returns, given its arguments.
func (c *costCheck) builtinValue(name string, args builtinArgs) *cost {
	first := args.at(0)
	switch {
	case name == "split" || name == "splitAfter":
		return splitCost(first)
	case name == "repeat":
		return repeatCost(first, args.at(1))
	case textBuiltins[name] && first.kind == kText:
		return &cost{kind: kText, size: 3 * first.size, why: first.why}
	case collectionBuiltins[name]:
		return collectionCost(name, first, args.at(1))
	case name == "concat":
		return c.concatCost(args)
	case name == "flatten":
		return flattenCost(first)
	case name == "first" || name == "last" || name == "get":
		return first.items()
	case name == "fromJSON", args.anyData():
		return ticketData("")
	case first.kind == kText || name == "join" || name == "string" || name == "toJSON" || name == "replace":
		return &cost{kind: kText, size: math.Inf(1), why: "a text made by " + name + "()"}
	}
	return scalarCost()
}

// splitCost is the value of split(text, sep): at most one item more than
// the text is long, each no longer than it.
func splitCost(text *cost) *cost {
	switch {
	case text.kind == kText && !math.IsInf(text.size, 1):
		return &cost{kind: kList, size: text.size + 1, elem: &cost{kind: kText, size: text.size}}
	case text.kind == kText:
		return &cost{kind: kUnbound, why: text.why}
	}
	return ticketData("")
}

// repeatCost is the value of repeat(text, times): bounded when times is a
// constant.
func repeatCost(text, times *cost) *cost {
	if text.kind == kText && times.num != nil {
		return &cost{kind: kText, size: text.size * max(0, *times.num), why: text.why}
	}
	return &cost{kind: kText, size: math.Inf(1), why: "a text made by repeat() with a count that is not a constant"}
}

// collectionCost is the value of a collectionBuiltins call on first (k:
// the count of take).
func collectionCost(name string, first, k *cost) *cost {
	out := first.value()
	out.num = nil
	switch {
	case out.kind == kMap && name == "keys":
		out.kind, out.elem = kList, scalarCost()
	case out.kind == kMap && name == "toPairs":
		out.kind, out.elem = kList, &cost{kind: kList, size: 2, elem: unionCost(scalarCost(), first.items())}
	case out.kind == kMap:
		out.kind = kList
	case out.kind == kList && name == "fromPairs":
		out.kind, out.elem = kMap, ticketData("")
	}
	if name == "take" && out.kind == kList && k.num != nil {
		out.size = min(out.size, max(0, *k.num))
	}
	return out
}

// concatCost is the value of concat(lists...): as many items as all of
// them.
func (c *costCheck) concatCost(args builtinArgs) *cost {
	out := &cost{kind: kList}
	for _, a := range args {
		k, assumed, ok := a.bound()
		if !ok {
			return a.value()
		}
		out.size += k
		out.assumed = out.assumed || assumed
		out.elem = c.union(out.elem, a.items())
	}
	return out
}

// flattenCost is the value of flatten(v): every item of the nested lists.
func flattenCost(v *cost) *cost {
	size, assumed := 1.0, false
	for depth := 0; depth < 16; depth++ {
		switch v.kind {
		case kList:
			size *= v.size
			assumed = assumed || v.assumed
			if v.elem == nil {
				return &cost{kind: kList, size: size, assumed: assumed, elem: scalarCost()}
			}
			v = v.elem
		case kData, kEnv, kTicket:
			return &cost{kind: kList, size: size * ListBound, assumed: true, elem: ticketData("")}
		case kUnbound:
			return v.value()
		default:
			return &cost{kind: kList, size: size, assumed: assumed, elem: v.value()}
		}
	}
	return &cost{kind: kUnbound, why: "lists nested too deep"}
}

// loop is the cost of a builtin that runs its predicate on every item of
// its first argument.
func (c *costCheck) loop(n *ast.BuiltinNode) *cost {
	coll := c.visit(n.Arguments[0])
	items, assumed, ok := coll.bound()
	if !ok {
		return c.fail(n.Arguments[0], "%s() over %s: it has no size the loader can bound (%s)", n.Name, coll.label(), coll.why)
	}
	scope := predScope{item: coll.items()}
	if n.Name == "reduce" {
		scope.acc = &cost{kind: kUnbound, text: "#acc", why: "the accumulator of reduce() may grow at every step"}
	}
	c.preds = append(c.preds, scope)
	body := c.visit(n.Arguments[1])
	c.preds = c.preds[:len(c.preds)-1]
	vs := []*cost{coll}
	for _, a := range n.Arguments[2:] {
		vs = append(vs, c.visit(a))
	}
	steps, chain := addCosts(vs...)
	loop := mulSteps(items, 1+body.steps)
	if loop >= steps {
		chain = append([]loopStep{{what: n.Name + "() over " + coll.label(), n: items, assumed: assumed, off: startOf(n)}}, body.chain...)
	}
	steps += loop
	item := coll.items()
	var out *cost
	switch n.Name {
	case "filter", "sortBy":
		out = &cost{kind: kList, size: items, assumed: assumed, elem: item}
	case "map":
		out = &cost{kind: kList, size: items, assumed: assumed, elem: body.value()}
	case "find", "findLast":
		out = item
	case "groupBy":
		out = &cost{kind: kMap, size: items, assumed: assumed, elem: &cost{kind: kList, size: items, assumed: assumed, elem: item}}
	case "reduce":
		out = &cost{kind: kUnbound, why: "the result of reduce() may be any size"}
	default:
		out = scalarCost()
	}
	out.text = srcText(n)
	out.steps, out.chain = steps, chain
	return out
}
