package rules

import (
	"math"

	"github.com/expr-lang/expr/ast"
)

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
