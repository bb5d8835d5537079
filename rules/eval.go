package rules

import (
	"fmt"
	"maps"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/deskbot/deskbot/sdclient"
)

// Evaluate runs every rule over tickets at now and returns a decision per
// (rule, ticket) whose query holds locally and whose if is true, with its
// actions rendered, ordered by ticket and then by rule in file order. A
// rule that fails at run time on a ticket yields a decision with Err set and
// no actions. Evaluate does no I/O and is safe for concurrent use.
func (s *Set) Evaluate(tickets []*sdclient.Ticket, now time.Time) []Decision {
	return s.evaluate(s.rules, tickets, now)
}

// EvaluateRule is Evaluate for one rule of the set, e.g. over the tickets
// of that rule's own poll, or to re-check a freshly re-read ticket before
// acting.
func (s *Set) EvaluateRule(r *Rule, tickets []*sdclient.Ticket, now time.Time) []Decision {
	return s.evaluate([]*Rule{r}, tickets, now)
}

// EvaluateRules is Evaluate for some rules of the set (those due in a
// cycle): each ticket's expression environment is built once and shared by
// every rule whose query holds on it.
func (s *Set) EvaluateRules(rules []*Rule, tickets []*sdclient.Ticket, now time.Time) []Decision {
	return s.evaluate(rules, tickets, now)
}

func (s *Set) evaluate(rules []*Rule, tickets []*sdclient.Ticket, now time.Time) []Decision {
	m := s.getVM()
	defer s.putVM(m)
	now = now.UTC() // as the ticket's times: templates print them alike
	nowFn := func() time.Time { return now }
	var out []Decision
	rec := &ticketRecord{}
	cache := &termCache{terms: s.terms.terms, state: make([]uint8, len(s.terms.terms))}
	people := s.peopleFor()
	for _, t := range tickets {
		if t == nil {
			continue
		}
		rec.reset(t)
		cache.reset(rec)
		var env any // built on the first rule whose query holds
		for _, r := range rules {
			if !s.queryHolds(r, cache, rec) {
				continue
			}
			if env == nil {
				env = Env{Ticket: s.ticketEnv(t, people), Now: nowFn}
			}
			if d, fire := r.decide(m, t, env); fire {
				out = append(out, d)
			}
		}
	}
	return out
}

// queryHolds evaluates r's query on the ticket of rec, through the set's
// term cache when r is one of its rules.
func (s *Set) queryHolds(r *Rule, cache *termCache, rec *ticketRecord) bool {
	if r.set == s {
		return cache.eval(&r.plan)
	}
	return r.local.Eval(rec) // a rule of another set
}

// ifError is the error of a decision whose if failed at run time.
func ifError(r *Rule, t *sdclient.Ticket, err error) error {
	return fmt.Errorf("rule %q on ticket %d: if: %w", r.Name, t.ID, err)
}

// decide evaluates the rule's if and renders its actions for one ticket
// whose query holds. fire is false when the if is false.
func (r *Rule) decide(m *vm.VM, t *sdclient.Ticket, env any) (d Decision, fire bool) {
	d = Decision{Rule: r.Name, Once: r.Once, TicketID: t.ID, Ticket: t}
	if r.cond != nil {
		holds, err := r.cond.evalBool(m, env)
		if err != nil {
			d.Err = ifError(r, t, err)
			return d, true
		}
		if !holds {
			return d, false
		}
	}
	acts, err := r.render(m, env)
	if err != nil {
		d.Err = fmt.Errorf("rule %q on ticket %d: %w", r.Name, t.ID, err)
		return d, true
	}
	d.Actions = acts
	return d, true
}

func (c *compiled) evalBool(m *vm.VM, env any) (bool, error) {
	out, err := c.run(m, env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("want a bool, got %T", out)
	}
	return b, nil
}

// render expands the rule's actions for one environment.
func (r *Rule) render(m *vm.VM, env any) ([]Action, error) {
	acts := make([]Action, 0, len(r.actions))
	for _, a := range r.actions {
		out := Action{Kind: a.kind}
		var err error
		switch a.kind {
		case ActionNote, ActionReply:
			out.Text, err = a.text.render(m, env)
		case ActionAlert:
			out.Channel = a.channel
			if out.Text, err = a.text.render(m, env); err == nil {
				out.Mention, err = a.mention.render(m, env)
			}
		case ActionDM:
			out.Channel, out.To = a.channel, a.to
			out.Text, err = a.text.render(m, env)
		case ActionPage:
			out.Channel, out.Policy = a.channel, a.policy
			out.Text, err = a.text.render(m, env)
		case ActionUpdate:
			out.Update = cloneUpdate(a.update)
			out.AssignEmail = a.assignEmail
			err = renderSetTemplates(m, env, a.setTemplates, out.Update)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.kind, err)
		}
		acts = append(acts, out)
	}
	return acts, nil
}

// cloneUpdate deep-copies an update so that a decision's consumer may change
// it without touching the loaded rule.
func cloneUpdate(u *sdclient.TicketUpdate) *sdclient.TicketUpdate {
	if u == nil {
		return &sdclient.TicketUpdate{}
	}
	c := &sdclient.TicketUpdate{
		Subject:      clonePtr(u.Subject),
		Description:  clonePtr(u.Description),
		Status:       clonePtr(u.Status),
		Priority:     clonePtr(u.Priority),
		Source:       clonePtr(u.Source),
		Urgency:      clonePtr(u.Urgency),
		Impact:       clonePtr(u.Impact),
		Type:         clonePtr(u.Type),
		GroupID:      clonePtr(u.GroupID),
		ResponderID:  clonePtr(u.ResponderID),
		DepartmentID: clonePtr(u.DepartmentID),
		Category:     clonePtr(u.Category),
		SubCategory:  clonePtr(u.SubCategory),
		ItemCategory: clonePtr(u.ItemCategory),
		DueBy:        clonePtr(u.DueBy),
		FrDueBy:      clonePtr(u.FrDueBy),
	}
	if u.Tags != nil {
		tags := append([]string{}, (*u.Tags)...)
		c.Tags = &tags
	}
	if u.CustomFields != nil {
		c.CustomFields = maps.Clone(u.CustomFields)
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
