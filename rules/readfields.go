package rules

import (
	"slices"

	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// ReadFields lists what r's verdict and the rendering of its actions read
// of a ticket: query, the fields of its query as the filter names them
// (status, priority, agent_id, group_id, tag, custom fields by name, and
// "status:open", the status:open macro), and exprs, the ticket fields its
// if and templates read (ticket.NAME, first level, as IfFields, each
// once). all is
// true when they cannot be listed: an expression uses the ticket as a
// whole (but for has_due(ticket), which reads due_by, and has_tag(ticket,
// ...), tags) or a field of it not by name. So a replay may
// skip asking r again about a ticket none of whose listed fields changed:
// the verdict, its Until and a rendering error are the same.
func (r *Rule) ReadFields() (query, exprs []string, all bool) {
	for _, t := range filter.Terms(r.local) {
		query = append(query, t.Field)
	}
	add := func(c *compiled) {
		if c == nil || all {
			return
		}
		f, whole := exprTicketFields(c.prog)
		all = all || whole
		for _, f := range f {
			if !slices.Contains(exprs, f) {
				exprs = append(exprs, f)
			}
		}
	}
	add(r.cond)
	addT := func(t *template) {
		if t == nil {
			return
		}
		for _, p := range t.parts {
			add(p.expr)
		}
	}
	for _, a := range r.actions {
		addT(a.text)
		addT(a.mention)
		for _, st := range a.setTemplates {
			addT(st.tmpl)
		}
	}
	return query, exprs, all
}

// exprTicketFields are the ticket fields p reads by name; whole is true
// when it also reads the ticket otherwise (every use of the identifier
// ticket that is not ticket.NAME).
func exprTicketFields(p *vm.Program) (fields []string, whole bool) {
	if p == nil {
		return nil, false
	}
	v := &fieldVisitor{}
	node := p.Node()
	ast.Walk(&node, v)
	return v.fields, v.idents > v.named
}

// wholeTicketFuncs are the functions given the ticket whole, by the one
// field of it they read.
var wholeTicketFuncs = map[string]string{"has_due": "due_by", "has_tag": "tags"}

type fieldVisitor struct {
	fields        []string
	idents, named int
}

func (v *fieldVisitor) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		if n.Value == "ticket" {
			v.idents++
		}
	case *ast.MemberNode:
		if f, ok := ticketField(n); ok {
			v.named++
			v.fields = append(v.fields, f)
		}
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || len(n.Arguments) == 0 {
			return
		}
		if arg, ok := n.Arguments[0].(*ast.IdentifierNode); !ok || arg.Value != "ticket" {
			return
		}
		if f, ok := wholeTicketFuncs[id.Value]; ok {
			v.named++
			v.fields = append(v.fields, f)
		}
	}
}
