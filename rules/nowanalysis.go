package rules

// How an if reads now(), found once when the rules load: the comparisons
// whose truth moves with the clock (atoms) and how to evaluate their sides,
// so Verdicts can say until when an answer holds (see verdict.go).

import (
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// analyzeNow finds how the if src (already compiled) reads now(): nil
// when it does not. It patches src as compileExpr does (due-date guards,
// folded durations, named codes) and compiles each side of an atom as an
// expression of its own.
func analyzeNow(src string) *nowAnalysis {
	cfg := conf.CreateNew()
	for _, op := range exprOptions(&patcher{}, false) {
		op(cfg)
	}
	cfg.Check()
	tree, err := checker.ParseCheck(src, cfg)
	if err != nil {
		return &nowAnalysis{opaque: true} // it compiled once: cannot happen
	}
	var u nowUses
	ast.Walk(&tree.Node, &u)
	switch {
	case u.envs != u.steps || u.idents != u.calls:
		// $env.now(), or now not called: read in ways not followed here.
		return &nowAnalysis{opaque: true}
	case u.calls == 0:
		return nil
	}
	a := &nowAnalyzer{cfg: cfg, src: tree.Source, declared: u.declared}
	if !a.visit(tree.Node) {
		return &nowAnalysis{opaque: true}
	}
	return &nowAnalysis{atoms: a.atoms}
}

// nowUses counts the reads of now and $env in an expression.
type nowUses struct {
	idents, calls int // identifiers now; calls now()
	envs, steps   int // identifiers $env; the loader's step calls (stepFuncName($env))
	declared      map[string]bool
}

// Visit implements ast.Visitor.
func (u *nowUses) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		switch n.Value {
		case "now":
			u.idents++
		case "$env":
			u.envs++
		}
	case *ast.CallNode:
		if isNowCall(n) {
			u.calls++
		}
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == stepFuncName && len(n.Arguments) == 1 {
			if e, ok := n.Arguments[0].(*ast.IdentifierNode); ok && e.Value == "$env" {
				u.steps++
			}
		}
	case *ast.VariableDeclaratorNode:
		if u.declared == nil {
			u.declared = map[string]bool{}
		}
		u.declared[n.Name] = true
	}
}

func isNowCall(n ast.Node) bool {
	c, ok := n.(*ast.CallNode)
	if !ok || len(c.Arguments) != 0 {
		return false
	}
	id, ok := c.Callee.(*ast.IdentifierNode)
	return ok && id.Value == "now"
}

// countNow counts the calls of now() in n.
func countNow(n ast.Node) int {
	var u nowUses
	ast.Walk(&n, &u)
	return u.calls
}

type nowAnalyzer struct {
	cfg      *conf.Config
	src      file.Source
	declared map[string]bool // names of let variables
	atoms    []nowAtom
}

// visit collects the atoms of n; false when a now() in n is not inside
// one.
func (a *nowAnalyzer) visit(n ast.Node) bool {
	if countNow(n) == 0 {
		return true
	}
	if a.atom(n) {
		return true
	}
	kids, known := children(n)
	if !known || isNowCall(n) {
		return false
	}
	for _, k := range kids {
		if !a.visit(k) {
			return false
		}
	}
	return true
}

// atom records n if it is a comparison with one now() reached through +
// and - whose sides compile alone.
func (a *nowAnalyzer) atom(n ast.Node) bool {
	var l, r ast.Node
	var op string
	switch n := n.(type) {
	case *ast.BinaryNode:
		switch n.Operator {
		case "<", "<=", ">", ">=", "==", "!=":
			l, r, op = n.Left, n.Right, n.Operator
		default:
			return false
		}
	case *ast.CallNode: // t.Before(u), t.After(u), t.Equal(u)
		m, ok := n.Callee.(*ast.MemberNode)
		if !ok || !isTimeComparison(m) || len(n.Arguments) != 1 || m.Optional {
			return false
		}
		l, r = m.Node, n.Arguments[0]
		op = map[string]string{"Before": "<", "After": ">", "Equal": "=="}[m.Property.(*ast.StringNode).Value]
	default:
		return false
	}
	cl, cr := countNow(l), countNow(r)
	if cl+cr != 1 {
		return false
	}
	if cr == 1 { // now() on the right: a < b is b > a
		l, r, op = r, l, mirror[op]
	}
	x := nowAtom{op: op}
	var ok bool
	if x.slope, ok = nowSlope(l); !ok {
		// (now() - ticket.created_at).Hours() > 4
		if l, x.unit, ok = durationMethod(l); !ok {
			return false
		}
		if x.slope, ok = nowSlope(l); !ok {
			return false
		}
	}
	ls, ok1 := a.side(l)
	rs, ok2 := a.side(r)
	if !ok1 || !ok2 {
		return false
	}
	x.left, x.right = ls, rs
	a.atoms = append(a.atoms, x)
	return true
}

// mirror turns a op b into b mirror[op] a.
var mirror = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

// durationUnits are the methods of a duration that scale it to a number,
// monotonically: Hours, Minutes and Seconds.
var durationUnits = map[string]func(time.Duration) float64{
	"Hours":   time.Duration.Hours,
	"Minutes": time.Duration.Minutes,
	"Seconds": time.Duration.Seconds,
}

// durationMethod splits n if it is d.Hours(), d.Minutes() or d.Seconds().
func durationMethod(n ast.Node) (d ast.Node, unit string, ok bool) {
	c, ok := n.(*ast.CallNode)
	if !ok || len(c.Arguments) != 0 {
		return nil, "", false
	}
	m, ok := c.Callee.(*ast.MemberNode)
	if !ok || m.Optional {
		return nil, "", false
	}
	prop, ok := m.Property.(*ast.StringNode)
	if !ok || durationUnits[prop.Value] == nil {
		return nil, "", false
	}
	return m.Node, prop.Value, true
}

// nowSlope is how n, holding one now(), moves with it: +1 or -1 when n is
// built of now() with + and - (or a time's Add and Sub) only.
func nowSlope(n ast.Node) (int, bool) {
	if isNowCall(n) {
		return 1, true
	}
	k, l, r, ok := arithOf(n)
	if !ok {
		return 0, false
	}
	if countNow(l) == 1 {
		return nowSlope(l)
	}
	s, ok := nowSlope(r)
	if k == sideSub {
		s = -s
	}
	return s, ok
}

// arithOf splits n if it is a + or a -: a + b, a - b, a.Add(b) (a time
// plus a duration) or a.Sub(b) (a time minus a time).
func arithOf(n ast.Node) (k sideKind, l, r ast.Node, ok bool) {
	switch n := n.(type) {
	case *ast.BinaryNode:
		switch n.Operator {
		case "+":
			return sideAdd, n.Left, n.Right, true
		case "-":
			return sideSub, n.Left, n.Right, true
		}
	case *ast.CallNode:
		m, isMember := n.Callee.(*ast.MemberNode)
		if !isMember || m.Optional || len(n.Arguments) != 1 {
			break
		}
		switch prop, _ := m.Property.(*ast.StringNode); {
		case prop == nil:
		case prop.Value == "Add":
			return sideAdd, m.Node, n.Arguments[0], true
		case prop.Value == "Sub":
			return sideSub, m.Node, n.Arguments[0], true
		}
	}
	return 0, nil, nil, false
}

// side compiles n, one side of an atom; false when it reads a loop's or
// a let's variable, which it cannot do alone.
func (a *nowAnalyzer) side(n ast.Node) (*side, bool) {
	if sd := fastSide(n); sd != nil {
		return sd, true
	}
	closed := true
	ast.Walk(&n, visitFunc(func(node *ast.Node) {
		switch x := (*node).(type) {
		case *ast.PointerNode:
			closed = false
		case *ast.IdentifierNode:
			if a.declared[x.Value] {
				closed = false
			}
		}
	}))
	if !closed {
		return nil, false
	}
	tree := &parser.Tree{Node: n, Source: a.src}
	if _, err := checker.Check(tree, a.cfg); err != nil {
		return nil, false
	}
	prog, err := compiler.Compile(tree, a.cfg)
	if err != nil {
		return nil, false
	}
	return &side{kind: sideProg, prog: &compiled{prog: prog}}, true
}

// fastSide returns n as a side computed without a program, or nil.
func fastSide(n ast.Node) *side {
	switch n := n.(type) {
	case *ast.ConstantNode: // a folded duration("...")
		if v := toTval(n.Value); v.ok {
			return &side{kind: sideConst, value: v}
		}
	case *ast.IntegerNode:
		return &side{kind: sideNum, num: float64(n.Value)}
	case *ast.FloatNode:
		return &side{kind: sideNum, num: n.Value}
	case *ast.CallNode:
		if isNowCall(n) {
			return &side{kind: sideNow}
		}
	case *ast.MemberNode:
		if name, ok := ticketField(n); ok && !n.Optional {
			if f, ok := timeFields[name]; ok {
				return &side{kind: sideField, field: f}
			}
		}
	}
	if k, l, r, ok := arithOf(n); ok {
		l, r := fastSide(l), fastSide(r)
		if l == nil || r == nil {
			return nil
		}
		return &side{kind: k, l: l, r: r}
	}
	return nil
}

type visitFunc func(*ast.Node)

func (f visitFunc) Visit(n *ast.Node) { f(n) }

// children lists the operands of n as ast.Walk visits them; known is false
// for a node this package does not know (a newer expr).
func children(n ast.Node) (kids []ast.Node, known bool) {
	switch n := n.(type) {
	case *ast.NilNode, *ast.IdentifierNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode,
		*ast.StringNode, *ast.BytesNode, *ast.ConstantNode, *ast.PointerNode:
		return nil, true
	case *ast.UnaryNode:
		return []ast.Node{n.Node}, true
	case *ast.BinaryNode:
		return []ast.Node{n.Left, n.Right}, true
	case *ast.ChainNode:
		return []ast.Node{n.Node}, true
	case *ast.MemberNode:
		return []ast.Node{n.Node, n.Property}, true
	case *ast.SliceNode:
		kids = []ast.Node{n.Node}
		if n.From != nil {
			kids = append(kids, n.From)
		}
		if n.To != nil {
			kids = append(kids, n.To)
		}
		return kids, true
	case *ast.CallNode:
		return append([]ast.Node{n.Callee}, n.Arguments...), true
	case *ast.BuiltinNode:
		return n.Arguments, true
	case *ast.PredicateNode:
		return []ast.Node{n.Node}, true
	case *ast.VariableDeclaratorNode:
		return []ast.Node{n.Value, n.Expr}, true
	case *ast.SequenceNode:
		return n.Nodes, true
	case *ast.ConditionalNode:
		return []ast.Node{n.Cond, n.Exp1, n.Exp2}, true
	case *ast.ArrayNode:
		return n.Nodes, true
	case *ast.MapNode:
		return n.Pairs, true
	case *ast.PairNode:
		return []ast.Node{n.Key, n.Value}, true
	}
	return nil, false
}
