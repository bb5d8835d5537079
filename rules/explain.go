package rules

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// Explanation says, for one rule and one ticket, why the rule fires or not.
type Explanation struct {
	Rule     string
	TicketID int64

	// Query is the rule's query as written; QueryHolds whether it holds
	// locally, and Terms how each of its terms fared.
	Query      string
	QueryHolds bool
	Terms      []TermResult

	// If is the rule's condition ("" when it has none; IfHolds is then
	// true). Values are the inputs the condition referenced: each ticket
	// field (ticket.priority) and now(), with their values for this ticket.
	If      string
	IfHolds bool
	Values  []NamedValue

	// Fires is QueryHolds && IfHolds && Err == nil; Actions are then the
	// rendered actions.
	Fires   bool
	Actions []Action
	Err     error
}

// TermResult is one term of a query and whether it held.
type TermResult struct {
	Term  string
	Holds bool
}

// NamedValue is one input of an if expression.
type NamedValue struct {
	Name  string
	Value any
}

// Explain evaluates every rule on one ticket at now and says why each one
// fires or not. The if is evaluated even when the query fails, so both
// halves can be shown.
func (s *Set) Explain(t *sdclient.Ticket, now time.Time) []Explanation {
	m := s.getVM()
	defer s.putVM(m)
	now = now.UTC() // as in Evaluate
	env := Env{Ticket: s.ticketEnv(t, s.peopleFor()), Now: func() time.Time { return now }}
	var boxed any = env
	rec := &ticketRecord{}
	out := make([]Explanation, 0, len(s.rules))
	for _, r := range s.rules {
		rec.reset(t)
		x := Explanation{Rule: r.Name, TicketID: t.ID, Query: r.Query, If: r.If, IfHolds: true}
		x.QueryHolds = r.local.Eval(rec)
		orig, local := filter.Terms(r.query), filter.Terms(r.local)
		for i, term := range local {
			text := term.String()
			if i < len(orig) {
				text = orig[i].String()
			}
			x.Terms = append(x.Terms, TermResult{Term: text, Holds: term.Eval(rec)})
		}
		if r.cond != nil {
			for _, f := range r.cond.fields {
				if get, ok := ticketFieldGetters[f]; ok {
					x.Values = append(x.Values, NamedValue{Name: "ticket." + f, Value: get(&env.Ticket)})
				}
			}
			if r.cond.usesNow {
				x.Values = append(x.Values, NamedValue{Name: "now()", Value: now})
			}
			holds, err := r.cond.evalBool(m, boxed)
			if err != nil {
				x.Err = fmt.Errorf("if: %w", err)
			}
			x.IfHolds = holds
		}
		if x.QueryHolds && x.IfHolds && x.Err == nil {
			acts, err := r.render(m, boxed)
			if err != nil {
				x.Err = err
			} else {
				x.Fires = true
				x.Actions = acts
			}
		}
		out = append(out, x)
	}
	return out
}

// WriteExplanation prints explanations for a person: per rule, the verdict,
// each query term, the if with the values it read, and the actions.
func WriteExplanation(w io.Writer, exps []Explanation) error {
	bw := bufio.NewWriter(w)
	for _, x := range exps {
		verdict := "does not fire"
		switch {
		case x.Err != nil:
			verdict = "ERROR"
		case x.Fires:
			verdict = "FIRES"
		}
		fmt.Fprintf(bw, "rule %s on ticket #%d: %s\n", x.Rule, x.TicketID, verdict)
		fmt.Fprintf(bw, "  query %s: %s\n", holdsWord(x.QueryHolds), x.Query)
		for _, t := range x.Terms {
			fmt.Fprintf(bw, "    %-5s %s\n", holdsWord(t.Holds), t.Term)
		}
		if x.If != "" {
			fmt.Fprintf(bw, "  if    %s: %s\n", holdsWord(x.IfHolds && x.Err == nil), x.If)
			for _, v := range x.Values {
				fmt.Fprintf(bw, "    %s = %s\n", v.Name, explainValue(v.Value))
			}
		}
		if x.Err != nil {
			fmt.Fprintf(bw, "  error: %v\n", x.Err)
		}
		for _, a := range x.Actions {
			fmt.Fprintf(bw, "  %s\n", describeAction(a))
		}
	}
	return bw.Flush()
}

func holdsWord(b bool) string {
	if b {
		return "holds"
	}
	return "fails"
}

// explainValue formats a value, marking what would otherwise print empty.
func explainValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case time.Time:
		if x.IsZero() {
			return "(none: zero time)"
		}
	case nil:
		return "null"
	}
	return formatValue(v)
}
