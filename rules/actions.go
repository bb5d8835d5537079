package rules

import (
	"fmt"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// RenderActions renders rule r's actions for ticket t at now without
// checking its query or if: a firing that has begun must finish with the
// rest of its actions even when its first ones moved the ticket out of
// the rule's query.
func (s *Set) RenderActions(r *Rule, t *sdclient.Ticket, now time.Time) ([]Action, error) {
	if r == nil || t == nil {
		return nil, fmt.Errorf("render actions: rule or ticket is nil")
	}
	m := s.getVM()
	defer s.putVM(m)
	now = now.UTC()
	env := Env{Ticket: s.ticketEnv(t, s.peopleFor()), Now: func() time.Time { return now }}
	acts, err := r.render(m, env)
	if err != nil {
		return nil, fmt.Errorf("rule %q on ticket %d: %w", r.Name, t.ID, err)
	}
	return acts, nil
}
