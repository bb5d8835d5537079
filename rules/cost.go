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
