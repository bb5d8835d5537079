package rules

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/deskbot/deskbot/sdclient"
)

// exprError is a compile error of one expression, positioned by rune offset
// inside the expression's source.
type exprError struct {
	Off int
	Msg string
}

// compiled is a compiled expression plus what Explain needs to know about it.
type compiled struct {
	prog *vm.Program
	// fields are the ticket fields the expression references, in order of
	// first appearance; usesNow is set when it calls now().
	fields  []string
	usesNow bool
	// now says when the answer of an if may change with now() alone
	// (see verdict.go); nil for templates and for an if that never
	// reads now().
	now *nowAnalysis
	// at, set by the loader, turns a rune offset in the expression into
	// FILE:LINE:COL, so that a run-time error points into the file.
	at func(off int) string
}

// runError is an expression's run-time error on one line: expr's own
// message positioned in the rules file, without expr's multi-line snippet
// of the expression.
type runError struct {
	msg string
	err error
}

// Error returns the one-line message.
func (e *runError) Error() string { return e.msg }

// Unwrap returns expr's error.
func (e *runError) Unwrap() error { return e.err }

// runError positions a run-time error of c in the rules file.
func (c *compiled) runError(err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return err
	}
	msg := cleanExprMsg(fe.Message)
	switch {
	case errors.Is(err, errSteps):
		msg = fmt.Sprintf("%v: its loops ran more than %s steps on this ticket (the load-time check assumes at most %d items in a list from ticket data)",
			ErrBudget, thousands(MaxSteps), ListBound)
	case strings.Contains(msg, "memory budget exceeded"):
		msg = fmt.Sprintf("%v: it allocated more than %s items on this ticket (expr's memory budget)", ErrBudget, thousands(float64(conf.DefaultMemoryBudget)))
		err = fmt.Errorf("%w: %w", ErrBudget, err)
	case strings.Contains(msg, "<nil>"):
		msg += " (a custom field the ticket does not have is nil: give it a default, e.g. (ticket.custom_fields.seats ?? 0) > 10)"
	}
	if c.at != nil {
		msg = c.at(fe.From) + ": " + msg
	}
	return &runError{msg: msg, err: err}
}

// run evaluates c in env with a fresh step budget.
func (c *compiled) run(m *vm.VM, env any) (any, error) {
	if e, ok := env.(Env); ok && e.Ticket.steps != nil {
		e.Ticket.steps.n = 0
	}
	out, err := m.Run(c.prog, env)
	if err != nil {
		return nil, c.runError(err)
	}
	return out, nil
}

// stepFuncName is the function the loader calls at every step of a loop
// (the body of each predicate) to count it against MaxSteps: expr has
// neither a step budget nor a way to cancel a running program.
const stepFuncName = "_deskbot_step"

// errSteps stops an expression whose loops ran more than MaxSteps steps.
var errSteps = fmt.Errorf("%w: more than %d loop steps", ErrBudget, MaxSteps)

// stepFunc counts one step of a loop on the ticket's step counter ($env is
// its argument); it fails with errSteps past MaxSteps.
func stepFunc(params ...any) (any, error) {
	if e, ok := params[0].(Env); ok && e.Ticket.steps != nil {
		e.Ticket.steps.n++
		if e.Ticket.steps.n > MaxSteps {
			return nil, errSteps
		}
	}
	return true, nil
}

// compileExpr compiles src against Env. With asBool the result must be a
// bool. Constant duration("...") calls are folded; named codes become
// constants.
func compileExpr(src string, asBool bool) (*compiled, []exprError) {
	p := &patcher{}
	prog, err := expr.Compile(src, exprOptions(p, asBool)...)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	if err != nil {
		return nil, []exprError{toExprError(src, err)}
	}
	if e := checkCost(src); e != nil {
		return nil, []exprError{*e}
	}
	c := &compiled{prog: prog, fields: p.fields, usesNow: p.usesNow}
	if asBool { // an if: Verdicts asks when its answer may change
		c.now = analyzeNow(src)
	}
	return c, nil
}

// exprOptions are the options every expression compiles with, p patching
// it; with asBool the result must be a bool.
func exprOptions(p *patcher, asBool bool) []expr.Option {
	opts := []expr.Option{
		expr.Env(Env{}),
		expr.Patch(p),
		expr.Function("is_open", isOpenFunc, new(func(int) bool)),
		expr.Function("has_due", hasDueFunc, new(func(TicketEnv) bool)),
		expr.Function("has_tag", hasTagFunc, new(func(TicketEnv, string) bool)),
		// until(t) is patched into until(t, now()): see patcher.
		expr.Function("until", untilFunc, new(func(time.Time, time.Time) string)),
		expr.Function(stepFuncName, stepFunc, new(func(Env) bool)),
	}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	return opts
}

func isOpenFunc(params ...any) (any, error) {
	s, ok := params[0].(int)
	if !ok {
		return nil, fmt.Errorf("is_open: want a status code, got %T", params[0])
	}
	return sdclient.IsOpenStatus(s), nil
}

func hasDueFunc(params ...any) (any, error) {
	t, ok := params[0].(TicketEnv)
	if !ok {
		return nil, fmt.Errorf("has_due: want ticket, got %T", params[0])
	}
	return !t.DueBy.IsZero(), nil
}

// hasTagFunc is has_tag(ticket, tag): the ticket carries tag, in any case,
// as the desk's tag: query term matches it ("vpn" in ticket.tags would be
// case-sensitive).
func hasTagFunc(params ...any) (any, error) {
	t, ok := params[0].(TicketEnv)
	if !ok {
		return nil, fmt.Errorf("has_tag: want ticket, got %T", params[0])
	}
	tag, ok := params[1].(string)
	if !ok {
		return nil, fmt.Errorf("has_tag: want a tag string, got %T", params[1])
	}
	for _, x := range t.Tags {
		if strings.EqualFold(x, tag) {
			return true, nil
		}
	}
	return false, nil
}

// untilFunc is until(t, now): how long until t, in words, rounded to the
// minute: "in 28 min", "1 min ago", "in 2 h 5 min", "in 3 days 4 h".
// A ticket without the date (the zero time) has "no date".
func untilFunc(params ...any) (any, error) {
	t, ok1 := params[0].(time.Time)
	now, ok2 := params[1].(time.Time)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("until: want a time, got %T", params[0])
	}
	if t.IsZero() {
		return "no date", nil
	}
	return Until(t, now), nil
}

// Until says how long until t, seen at now, in words rounded to the
// minute: "in 28 min", "1 min ago", "in 2 h 5 min", "in 3 days 4 h",
// "in less than a minute".
func Until(t, now time.Time) string {
	d := t.Sub(now)
	ago := d < 0
	if ago {
		d = -d
	}
	var s string
	switch m := int64(d.Round(time.Minute) / time.Minute); {
	case m == 0:
		s = "less than a minute"
	case m < 60:
		s = fmt.Sprintf("%d min", m)
	case m < 48*60:
		s = fmt.Sprintf("%d h", m/60)
		if m%60 != 0 {
			s += fmt.Sprintf(" %d min", m%60)
		}
	default:
		h := (m + 30) / 60
		s = fmt.Sprintf("%d days", h/24)
		if h%24 != 0 {
			s += fmt.Sprintf(" %d h", h%24)
		}
	}
	if ago {
		return s + " ago"
	}
	return "in " + s
}

// toExprError turns an expr error into a message and an offset into src.
func toExprError(src string, err error) exprError {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return exprError{Off: 0, Msg: err.Error()}
	}
	off := fe.From
	if off == 0 && (fe.Line > 1 || fe.Column > 0) {
		off = offsetOf(src, fe.Line, fe.Column)
	}
	if n := len([]rune(src)); off > n {
		off = n
	}
	return exprError{Off: off, Msg: exprHint(cleanExprMsg(fe.Message))}
}

// offsetOf converts a 1-based line and 0-based rune column to a rune offset.
func offsetOf(src string, line, col int) int {
	off, l := 0, 1
	for _, r := range src {
		if l == line {
			break
		}
		off++
		if r == '\n' {
			l++
		}
	}
	return off + col
}

// cleanExprMsg hides the Go type names of the environment from messages.
func cleanExprMsg(msg string) string {
	msg = strings.ReplaceAll(msg, "rules.TicketEnv", "ticket")
	msg = strings.ReplaceAll(msg, "rules.Env", "environment")
	return msg
}

// patcher runs over each expression before type checking: it folds
// duration("literal") into a constant (a bad literal is a load error rather
// than a run-time one), replaces the named codes by integers, records
// which ticket fields and whether now() the expression uses, and makes
// every loop body count its steps (stepFuncName).
type patcher struct {
	errs    []exprError
	fields  []string
	usesNow bool
}

var durationType = reflect.TypeOf(time.Duration(0))

// duration folds duration("15m") into a constant, or records why the
// string is not a duration.
func (p *patcher) duration(node *ast.Node, n *ast.BuiltinNode) {
	if n.Name != "duration" || len(n.Arguments) != 1 {
		return
	}
	s, ok := n.Arguments[0].(*ast.StringNode)
	if !ok {
		return
	}
	d, err := time.ParseDuration(s.Value)
	if err != nil {
		p.errs = append(p.errs, exprError{
			Off: s.Location().From,
			Msg: fmt.Sprintf("invalid duration %q (want e.g. 90s, 15m, 2h30m)", s.Value),
		})
		return
	}
	c := &ast.ConstantNode{Value: d}
	ast.Patch(node, c)
	(*node).SetType(durationType)
}

// call notes a call of now(), makes until(t) until(t, now()), and guards
// time comparisons against absent due dates.
func (p *patcher) call(node *ast.Node, n *ast.CallNode) {
	if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "now" {
		p.usesNow = true
	}
	if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "until" && len(n.Arguments) == 1 {
		// until(t) is how long until t as seen from the evaluation's
		// clock: until(t, now()).
		n.Arguments = append(n.Arguments, &ast.CallNode{Callee: &ast.IdentifierNode{Value: "now"}})
		p.usesNow = true
	}
	if m, ok := n.Callee.(*ast.MemberNode); ok && isTimeComparison(m) {
		guardDueDates(node)
	}
}

// Visit implements ast.Visitor.
func (p *patcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		countSteps(n)
	case *ast.BuiltinNode:
		p.duration(node, n)
	case *ast.IdentifierNode:
		if v, ok := namedCodes[n.Value]; ok {
			ast.Patch(node, &ast.IntegerNode{Value: v})
		}
	case *ast.MemberNode:
		if f, ok := ticketField(n); ok && !slices.Contains(p.fields, f) {
			p.fields = append(p.fields, f)
		}
	case *ast.CallNode:
		p.call(node, n)
	case *ast.BinaryNode:
		switch n.Operator {
		case "==", "!=":
			if p.nilComparison(n) {
				return
			}
			guardDueDates(node)
		case "<", "<=", ">", ">=":
			guardDueDates(node)
		}
	}
}

// countSteps makes the body of predicate n call stepFuncName($env) first,
// at the body's position (where a run-time budget error points).
func countSteps(n *ast.PredicateNode) {
	loc := n.Node.Location()
	env := &ast.IdentifierNode{Value: "$env"}
	env.SetLocation(loc)
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: stepFuncName}, Arguments: []ast.Node{env}}
	call.Callee.SetLocation(loc)
	call.SetLocation(loc)
	seq := &ast.SequenceNode{Nodes: []ast.Node{call, n.Node}}
	seq.SetLocation(loc)
	n.Node = seq
}

// nilComparison reports (as an error) a comparison of a ticket field with
// nil: no field of ticket is ever nil (the desk's nulls are zero values),
// so `ticket.responder_id == nil` would silently never hold.
func (p *patcher) nilComparison(n *ast.BinaryNode) bool {
	m, ok := n.Left.(*ast.MemberNode)
	other := n.Right
	if !ok {
		m, ok = n.Right.(*ast.MemberNode)
		other = n.Left
	}
	if _, isNil := other.(*ast.NilNode); !ok || !isNil {
		return false
	}
	field, ok := ticketField(m)
	if !ok {
		return false
	}
	if _, known := ticketFieldGetters[field]; !known {
		return false // the checker says it is not a field
	}
	f := "ticket." + field
	instead := map[string]string{
		"responder_id":  f + " == 0 (0 when unassigned)",
		"group_id":      f + " == 0 (0 when unset)",
		"department_id": f + " == 0 (0 when unset)",
		"workspace_id":  f + " == 0 (0 when unset)",
		"category":      f + ` == "" ("" when unset)`,
		"sub_category":  f + ` == "" ("" when unset)`,
		"type":          f + ` == ""`,
		"due_by":        "!has_due(ticket)",
		"fr_due_by":     f + ".IsZero()",
		"tags":          "len(ticket.tags) == 0",
		"custom_fields": "ticket.custom_fields.NAME == nil, for one field",
	}[field]
	msg := fmt.Sprintf("%s is never nil: a null from the desk becomes a zero value", f)
	if instead != "" {
		msg += "; write " + instead
	}
	p.errs = append(p.errs, exprError{Off: m.Node.Location().From, Msg: msg})
	return true
}

// dueFields are the ticket's optional dates: the zero time when the
// ticket has none.
var dueFields = []string{"due_by", "fr_due_by"}

// isTimeComparison reports whether m is a comparing method of a time
// (t.Before(u), t.After(u), t.Equal(u)).
func isTimeComparison(m *ast.MemberNode) bool {
	prop, ok := m.Property.(*ast.StringNode)
	return ok && (prop.Value == "Before" || prop.Value == "After" || prop.Value == "Equal")
}

// guardDueDates makes the comparison at node false for a ticket without
// the due date it reads, as a person reads `ticket.due_by < now()`
// ("overdue"): it becomes `!ticket.due_by.IsZero() && ticket.due_by <
// now()`. Without the guard the missing date, the zero time, lies in the
// past and the comparison holds. Uses of the date as the receiver of
// IsZero() are left alone: they are how a rule asks whether there is one.
func guardDueDates(node *ast.Node) {
	used := dueFieldsIn(*node)
	if len(used) == 0 {
		return
	}
	guarded := *node
	for i := len(used) - 1; i >= 0; i-- {
		tree, err := parser.Parse("!ticket." + used[i] + ".IsZero()")
		if err != nil {
			return // cannot happen: the source is constant
		}
		guarded = &ast.BinaryNode{Operator: "&&", Left: tree.Node, Right: guarded}
	}
	ast.Patch(node, guarded)
}

// dueFieldsIn lists the due dates (dueFields) that n reads other than as
// the receiver of IsZero().
func dueFieldsIn(n ast.Node) []string {
	v := &dueVisitor{isZero: map[ast.Node]bool{}}
	ast.Walk(&n, v)
	used := map[string]bool{}
	for _, m := range v.seen {
		if !v.isZero[m] {
			used[dueField(m)] = true
		}
	}
	var out []string
	for _, f := range dueFields {
		if used[f] {
			out = append(out, f)
		}
	}
	return out
}

type dueVisitor struct {
	seen   []*ast.MemberNode // every ticket.due_by and ticket.fr_due_by
	isZero map[ast.Node]bool // the receivers of IsZero()
}

// Visit implements ast.Visitor.
func (v *dueVisitor) Visit(node *ast.Node) {
	m, ok := (*node).(*ast.MemberNode)
	if !ok {
		return
	}
	if prop, ok := m.Property.(*ast.StringNode); ok && prop.Value == "IsZero" {
		v.isZero[m.Node] = true
		return
	}
	if dueField(m) != "" {
		v.seen = append(v.seen, m)
	}
}

// dueField returns the due date m reads (ticket.due_by), or "".
func dueField(m *ast.MemberNode) string {
	if f, ok := ticketField(m); ok && slices.Contains(dueFields, f) {
		return f
	}
	return ""
}

// ticketField returns the field of ticket that m reads (ticket.priority
// gives priority); false when m reads anything else.
func ticketField(m *ast.MemberNode) (string, bool) {
	id, ok := m.Node.(*ast.IdentifierNode)
	if !ok || id.Value != "ticket" {
		return "", false
	}
	prop, ok := m.Property.(*ast.StringNode)
	if !ok {
		return "", false
	}
	return prop.Value, true
}
