package rules

import (
	"fmt"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/deskbot/deskbot/sdclient"
)

// RenderErrsWith appends to out[:0], for each rule of rs, the error that
// rendering its actions on t at now gives, the same as Evaluate's
// Decision.Err for it when its query and if hold, or nil when they
// render. It neither evaluates the query or the if nor builds the
// actions' text: it runs their templates' expressions only, which is
// where rendering fails, so that a replay can tell a decision that fails
// from one that fires without rendering it. Like VerdictsWith it uses
// buf's scratch and does no I/O.
func (s *Set) RenderErrsWith(buf *VerdictBuf, rs []*Rule, t *sdclient.Ticket, now time.Time, out []error) []error {
	out = out[:0]
	if t == nil {
		for range rs {
			out = append(out, nil)
		}
		return out
	}
	m := s.getVM()
	defer s.putVM(m)
	buf.setNow(now.UTC()) // as Evaluate
	var env any
	for _, r := range rs {
		var err error
		for _, a := range r.actions {
			if env == nil && a.readsTicket() {
				env, _ = buf.env(s, t)
			}
			if err = a.renderErr(m, env); err != nil {
				err = fmt.Errorf("rule %q on ticket %d: %s: %w", r.Name, t.ID, a.kind, err)
				break
			}
		}
		out = append(out, err)
	}
	return out
}

// readsTicket is whether rendering a runs an expression.
func (a *actionSpec) readsTicket() bool {
	if a.text.hasExpr() || a.mention.hasExpr() {
		return true
	}
	for _, st := range a.setTemplates {
		if st.tmpl.hasExpr() {
			return true
		}
	}
	return false
}

// renderErr is the error rendering a gives in env (render's), running
// its templates' expressions only.
func (a *actionSpec) renderErr(m *vm.VM, env any) error {
	switch a.kind {
	case ActionNote, ActionReply, ActionDM, ActionPage:
		return a.text.runErr(m, env)
	case ActionAlert:
		if err := a.text.runErr(m, env); err != nil {
			return err
		}
		return a.mention.runErr(m, env)
	case ActionUpdate:
		for _, st := range a.setTemplates {
			if err := st.tmpl.runErr(m, env); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *template) hasExpr() bool {
	if t == nil {
		return false
	}
	for _, p := range t.parts {
		if p.expr != nil {
			return true
		}
	}
	return false
}

// runErr is the error render gives: the first of its expressions' errors.
func (t *template) runErr(m *vm.VM, env any) error {
	if t == nil {
		return nil
	}
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		if _, err := p.expr.run(m, env); err != nil {
			return err
		}
	}
	return nil
}
