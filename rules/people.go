package rules

import (
	"slices"

	"github.com/deskbot/deskbot/sdclient"
)

// Person is a requester or an agent as expressions see them:
// ticket.requester.name, ticket.agent.email. Unknown ones (no People, a
// name not looked up yet, an unassigned ticket) are empty strings.
type Person struct {
	Name  string `expr:"name"`
	Email string `expr:"email"`
}

// GroupInfo is an agent group as expressions see it: ticket.group.name,
// "" when unknown or when the ticket has no group.
type GroupInfo struct {
	Name string `expr:"name"`
}

// People resolves the ids of a ticket to names for expressions and
// templates. Its methods are called while rules are evaluated, for every
// ticket, so they must answer from memory, at once, without I/O (a
// resolver fetches ahead of evaluation, see the scheduler); ok is false
// for an id it does not know.
type People interface {
	Requester(id int64) (p Person, ok bool)
	Agent(id int64) (p Person, ok bool)
	Group(id int64) (g GroupInfo, ok bool)
}

// peopleFields are the fields of TicketEnv that People fills.
var peopleFields = []string{"requester", "agent", "group"}

type peopleBox struct{ p People }

// UsePeople makes the set's evaluations fill ticket.requester,
// ticket.agent and ticket.group from p (nil: leave them empty). It is
// safe to call while the set is evaluated: evaluations that have begun
// keep the People they started with.
func (s *Set) UsePeople(p People) {
	if p == nil {
		s.people.Store(nil)
		return
	}
	s.people.Store(&peopleBox{p})
}

// NeedsPeople reports whether an expression or template of the set reads
// ticket.requester, ticket.agent or ticket.group: when none does, there is
// nothing to look up.
func (s *Set) NeedsPeople() bool { return s.needsPeople }

// peopleFor returns the People evaluations of s use now, nil when none
// or when no expression needs them.
func (s *Set) peopleFor() People {
	if !s.needsPeople {
		return nil
	}
	if b := s.people.Load(); b != nil {
		return b.p
	}
	return nil
}

// ticketEnvWith fills the people of e from p.
func ticketEnvWith(e *TicketEnv, p People) {
	if p == nil {
		return
	}
	if e.RequesterID != 0 {
		e.Requester, _ = p.Requester(e.RequesterID)
	}
	if e.ResponderID != 0 {
		e.Agent, _ = p.Agent(e.ResponderID)
	}
	if e.GroupID != 0 {
		e.Group, _ = p.Group(e.GroupID)
	}
}

// usesPeople reports whether any expression of rs reads a field People fills.
func usesPeople(rs []*Rule) bool {
	uses := func(c *compiled) bool {
		if c == nil {
			return false
		}
		for _, f := range c.fields {
			if slices.Contains(peopleFields, f) {
				return true
			}
		}
		return false
	}
	usesT := func(t *template) bool {
		if t == nil {
			return false
		}
		for _, p := range t.parts {
			if uses(p.expr) {
				return true
			}
		}
		return false
	}
	for _, r := range rs {
		if uses(r.cond) {
			return true
		}
		for _, a := range r.actions {
			if usesT(a.text) || usesT(a.mention) {
				return true
			}
			for _, st := range a.setTemplates {
				if usesT(st.tmpl) {
					return true
				}
			}
		}
	}
	return false
}

// ticketEnv is the environment of ticket t at now, with the set's People.
func (s *Set) ticketEnv(t *sdclient.Ticket, p People) TicketEnv {
	e := NewTicketEnv(t)
	ticketEnvWith(&e, p)
	return e
}
