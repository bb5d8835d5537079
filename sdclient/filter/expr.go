package filter

import (
	"strings"
	"time"
)

// Op is the comparison of a term.
type Op int

// The comparisons. :> and :< are inclusive, as on the desk.
const (
	// OpEq is field:v, equality (for a date-only v, "within that day").
	OpEq Op = iota
	// OpGte is field:>v, field >= v.
	OpGte
	// OpLte is field:<v, field <= v.
	OpLte
)

// String returns the operator as written: ":", ":>" or ":<".
func (o Op) String() string {
	switch o {
	case OpGte:
		return ":>"
	case OpLte:
		return ":<"
	}
	return ":"
}

// Expr is a parsed filter expression: a *Term, an *And or an *Or (always
// pointers, so a type switch needs only the pointer cases).
type Expr interface {
	// String returns the canonical text; Parse reads it back to an equal tree.
	String() string
	// Eval reports whether a record matches, with the desk's semantics
	// (see the package documentation).
	Eval(r Record) bool
	isExpr()
}

// Record is what an expression is evaluated against. FilterValues returns
// the values of a filter field (the filter's names: agent_id, tag, ...):
// none when the field is absent or null, several for a multi-valued field
// such as tag.
type Record interface {
	FilterValues(field string) []Value
}

// Values is a Record backed by a map, handy for tests and simulators.
type Values map[string][]Value

// FilterValues implements Record.
func (v Values) FilterValues(field string) []Value { return v[field] }

// Term is one comparison, field:value, field:>value or field:<value.
type Term struct {
	Field string
	Op    Op
	Value Value
	// Pos is the 0-based byte offset of Field in the parsed source (0 for
	// terms built in code).
	Pos int
}

// And is true when every one of Exprs is (true when empty). Parse and
// Rewrite never nest an And directly inside an And.
type And struct{ Exprs []Expr }

// Or is true when any one of Exprs is (false when empty). Parse and Rewrite
// never nest an Or directly inside an Or.
type Or struct{ Exprs []Expr }

func (*Term) isExpr() {}
func (*And) isExpr()  {}
func (*Or) isExpr()   {}

// String returns the canonical text of the term, e.g. created_at:>'2024-01-01'.
func (t *Term) String() string {
	var b strings.Builder
	t.appendTo(&b)
	return b.String()
}

func (t *Term) appendTo(b *strings.Builder) {
	b.WriteString(t.Field)
	b.WriteString(t.Op.String())
	t.Value.appendTo(b)
}

// String returns the canonical text: terms joined by " AND ", an Or member
// in parentheses. Nested Ands are flattened and one-member groups unwrapped.
func (a *And) String() string { return exprString(a) }

// String returns the canonical text: terms joined by " OR ", an And member
// in parentheses. Nested Ors are flattened and one-member groups unwrapped.
func (o *Or) String() string { return exprString(o) }

func exprString(e Expr) string {
	n := normalize(e)
	if n == nil {
		return ""
	}
	var b strings.Builder
	writeExpr(&b, n, false)
	return b.String()
}

// writeExpr prints a normalized tree; paren wraps a group.
func writeExpr(b *strings.Builder, e Expr, paren bool) {
	var exprs []Expr
	var sep string
	switch e := e.(type) {
	case *Term:
		e.appendTo(b)
		return
	case *And:
		exprs, sep = e.Exprs, " AND "
	case *Or:
		exprs, sep = e.Exprs, " OR "
	}
	if paren {
		b.WriteByte('(')
	}
	for i, x := range exprs {
		if i > 0 {
			b.WriteString(sep)
		}
		_, isTerm := x.(*Term)
		writeExpr(b, x, !isTerm)
	}
	if paren {
		b.WriteByte(')')
	}
}

// Eval reports whether every member matches.
func (a *And) Eval(r Record) bool {
	for _, x := range a.Exprs {
		if x != nil && !x.Eval(r) {
			return false
		}
	}
	return true
}

// Eval reports whether any member matches.
func (o *Or) Eval(r Record) bool {
	for _, x := range o.Exprs {
		if x != nil && x.Eval(r) {
			return true
		}
	}
	return false
}

// Eval reports whether the record satisfies the term. See the package
// documentation for null, _id fields, dates and multi-valued fields.
func (t *Term) Eval(r Record) bool {
	if t == nil {
		return false
	}
	id := isIDField(t.Field)
	tv := t.Value
	if id && t.Op == OpEq {
		if n, ok := tv.asInt(); ok && n == 0 {
			tv = Value{Kind: KindNull}
		}
	}
	vals := r.FilterValues(t.Field)
	switch tv.Kind {
	case KindNull:
		if t.Op != OpEq {
			return false
		}
		for _, v := range vals {
			if !absent(v, id) {
				return false
			}
		}
		return true
	case KindWord:
		return false
	}
	for _, v := range vals {
		if !absent(v, id) && match(v, t.Op, tv) {
			return true
		}
	}
	return false
}

func isIDField(f string) bool { return strings.HasSuffix(f, "_id") }

// absent reports whether a record value counts as "no value": null, and 0
// in a field whose name ends in _id.
func absent(v Value, id bool) bool {
	if v.Kind == KindNull {
		return true
	}
	if id {
		if n, ok := v.asInt(); ok && n == 0 {
			return true
		}
	}
	return false
}

// match compares one present record value rv with the term's value tv.
func match(rv Value, op Op, tv Value) bool {
	switch rv.Kind {
	case KindNumber:
		n, ok := tv.asInt()
		return ok && cmpInt(rv.Num, op, n)
	case KindDate:
		t, day, ok := tv.asTime()
		return ok && cmpTime(rv.Time, op, t, day)
	case KindBool:
		b, ok := tv.asBool()
		return ok && op == OpEq && rv.Bool == b
	case KindString:
		return matchString(rv, op, tv)
	}
	return false
}

// matchString compares a string record value with the term's value: as
// the term's kind (a number, date or boolean held in the string), or
// case-insensitively as strings.
func matchString(rv Value, op Op, tv Value) bool {
	switch tv.Kind {
	case KindNumber:
		n, ok := rv.asInt()
		return ok && cmpInt(n, op, tv.Num)
	case KindDate:
		t, _, ok := rv.asTime()
		return ok && cmpTime(t, op, tv.Time, tv.DateOnly)
	case KindBool:
		b, ok := rv.asBool()
		return ok && op == OpEq && b == tv.Bool
	case KindString:
		if op == OpEq {
			return strings.EqualFold(rv.Str, tv.Str)
		}
		// A quoted number or date compared with a string field value
		// holding one compares as that number or date.
		if a, ok := rv.asInt(); ok {
			if b, ok := tv.asInt(); ok {
				return cmpInt(a, op, b)
			}
		}
		if a, _, ok := rv.asTime(); ok {
			if b, day, ok := tv.asTime(); ok {
				return cmpTime(a, op, b, day)
			}
		}
	}
	return false
}

func cmpInt(a int64, op Op, b int64) bool {
	switch op {
	case OpGte:
		return a >= b
	case OpLte:
		return a <= b
	}
	return a == b
}

// cmpTime compares a record instant x with a term instant t; a date-only t
// covers the whole UTC day [t, t+24h).
func cmpTime(x time.Time, op Op, t time.Time, day bool) bool {
	if !day {
		switch op {
		case OpGte:
			return !x.Before(t)
		case OpLte:
			return !x.After(t)
		}
		return x.Equal(t)
	}
	end := t.Add(24 * time.Hour)
	switch op {
	case OpGte:
		return !x.Before(t)
	case OpLte:
		return x.Before(end)
	}
	return !x.Before(t) && x.Before(end)
}

// Terms returns every term of e in source order. They are the tree's own
// terms, not copies.
func Terms(e Expr) []*Term {
	var out []*Term
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Term:
			if e != nil {
				out = append(out, e)
			}
		case *And:
			if e != nil {
				for _, x := range e.Exprs {
					walk(x)
				}
			}
		case *Or:
			if e != nil {
				for _, x := range e.Exprs {
					walk(x)
				}
			}
		}
	}
	walk(e)
	return out
}

// Rewrite returns a new tree in which every term t for which f returns
// (x, true) is replaced by x; terms for which f returns false are copied.
// Returning (nil, true) drops the term. The result is normalized: an Or put
// in place of a term inside an Or is merged into it, an Or put inside an And
// stays a parenthesized group, one-member groups are unwrapped and empty
// ones removed. Rewrite returns nil if nothing is left. e is not modified.
//
// It is how callers expand macros, e.g. status:open into
// (status:2 OR status:3 OR status:12).
func Rewrite(e Expr, f func(*Term) (Expr, bool)) Expr {
	return normalize(mapTerms(e, f))
}

// mapTerms deep-copies a tree, putting a copy of x in place of every term
// for which f returns (x, true); with a nil f it is a plain deep copy, so
// that a replacement shared between several Rewrite calls never aliases.
func mapTerms(e Expr, f func(*Term) (Expr, bool)) Expr {
	switch e := e.(type) {
	case *Term:
		if e == nil {
			return nil
		}
		if f != nil {
			if x, ok := f(e); ok {
				return mapTerms(x, nil)
			}
		}
		c := *e
		return &c
	case *And:
		if e == nil {
			return nil
		}
		return &And{Exprs: mapTermsList(e.Exprs, f)}
	case *Or:
		if e == nil {
			return nil
		}
		return &Or{Exprs: mapTermsList(e.Exprs, f)}
	}
	return nil
}

func mapTermsList(exprs []Expr, f func(*Term) (Expr, bool)) []Expr {
	out := make([]Expr, len(exprs))
	for i, x := range exprs {
		out[i] = mapTerms(x, f)
	}
	return out
}

// normalize flattens And-in-And and Or-in-Or, unwraps one-member groups and
// drops empty groups and nil members; it returns nil for an empty tree. It
// returns e itself (no allocation) when e is already normal.
func normalize(e Expr) Expr {
	switch e := e.(type) {
	case *Term:
		if e == nil {
			return nil
		}
		return e
	case *And:
		if e == nil {
			return nil
		}
		return normalizeGroup(e.Exprs, true, e)
	case *Or:
		if e == nil {
			return nil
		}
		return normalizeGroup(e.Exprs, false, e)
	}
	return nil
}

func normalizeGroup(exprs []Expr, and bool, orig Expr) Expr {
	if isNormalGroup(exprs, and) {
		return orig
	}
	var out []Expr
	for _, x := range exprs {
		n := normalize(x)
		switch n := n.(type) {
		case nil:
		case *And:
			if and {
				out = append(out, n.Exprs...)
			} else {
				out = append(out, n)
			}
		case *Or:
			if !and {
				out = append(out, n.Exprs...)
			} else {
				out = append(out, n)
			}
		default:
			out = append(out, n)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	if and {
		return &And{Exprs: out}
	}
	return &Or{Exprs: out}
}

// isNormalGroup reports whether a group with these members needs no change.
func isNormalGroup(exprs []Expr, and bool) bool {
	if len(exprs) < 2 {
		return false
	}
	for _, x := range exprs {
		switch x := x.(type) {
		case *Term:
			if x == nil {
				return false
			}
		case *And:
			if x == nil || and || !isNormalGroup(x.Exprs, true) {
				return false
			}
		case *Or:
			if x == nil || !and || !isNormalGroup(x.Exprs, false) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Equal reports whether two trees are structurally equal: the same shape,
// fields, operators and values. Term positions are ignored, and so a parsed
// expression equals the parse of its own String.
func Equal(a, b Expr) bool { return equalBy(a, b, Value.Equal) }

// equalBy is Equal with same deciding whether two term values match.
func equalBy(a, b Expr, same func(x, y Value) bool) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case *Term:
		b, ok := b.(*Term)
		if !ok || (a == nil) != (b == nil) {
			return false
		}
		return a == nil || (a.Field == b.Field && a.Op == b.Op && same(a.Value, b.Value))
	case *And:
		b, ok := b.(*And)
		if !ok || (a == nil) != (b == nil) {
			return false
		}
		return a == nil || equalListBy(a.Exprs, b.Exprs, same)
	case *Or:
		b, ok := b.(*Or)
		if !ok || (a == nil) != (b == nil) {
			return false
		}
		return a == nil || equalListBy(a.Exprs, b.Exprs, same)
	}
	return false
}

func equalListBy(a, b []Expr, same func(x, y Value) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalBy(a[i], b[i], same) {
			return false
		}
	}
	return true
}
