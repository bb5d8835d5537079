package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// withBegun adds to decisions a decision for every firing that has begun
// (an action done) and is still pending, whether or not its rule matches
// the ticket now: its first actions may have moved the ticket out of the
// query (an assignment, a status), and the rest must still happen, once.
// The executor renders their actions on the re-read ticket and does not
// re-check the rule (cy.begun).
func (s *Scheduler) withBegun(ctx context.Context, cy *cycle, decisions []rules.Decision) []rules.Decision {
	if s.cfg.dryRun {
		return decisions
	}
	begun, err := s.ledger.BegunFirings(ctx)
	if err != nil {
		cy.log.Warn("read the firings under way; they are finished next cycle", slog.Any("error", err))
		return decisions
	}
	have := make(map[rules.FiringKey]bool, len(decisions))
	for _, d := range decisions {
		have[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] = true
	}
	cy.begun = map[rules.FiringKey]bool{}
	for name, ids := range begun {
		r := cy.set.Rule(name)
		if r == nil {
			continue // the rule is gone from the file: nothing to render
		}
		for _, id := range ids {
			key := rules.FiringKey{Rule: name, TicketID: id}
			cy.begun[key] = true
			if !have[key] {
				decisions = append(decisions, rules.Decision{Rule: name, Once: r.Once, TicketID: id})
			}
		}
	}
	return decisions
}

// updateHolds reports whether every value an update action sets already
// holds on t: a resumed firing counts such an update as done instead of
// sending it again over a change somebody made since.
func (s *Scheduler) updateHolds(ctx context.Context, cy *cycle, t *sdclient.Ticket, a rules.Action) (bool, error) {
	u := sdclient.TicketUpdate{}
	if a.Update != nil {
		u = *a.Update
	}
	if a.AssignEmail != "" {
		id, err := s.agentID(ctx, cy, a.AssignEmail)
		if err != nil {
			return false, err
		}
		u.ResponderID = &id
	}
	same := func(set, have any) bool { return reflect.DeepEqual(set, have) }
	id64 := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	checks := []bool{
		u.Subject == nil || *u.Subject == t.Subject,
		u.Description == nil || *u.Description == t.Description,
		u.Status == nil || *u.Status == t.Status,
		u.Priority == nil || *u.Priority == t.Priority,
		u.Source == nil || *u.Source == t.Source,
		u.Urgency == nil || (t.Urgency != nil && *u.Urgency == *t.Urgency),
		u.Impact == nil || (t.Impact != nil && *u.Impact == *t.Impact),
		u.Type == nil || *u.Type == t.Type,
		u.GroupID == nil || *u.GroupID == id64(t.GroupID),
		u.ResponderID == nil || *u.ResponderID == id64(t.ResponderID),
		u.DepartmentID == nil || *u.DepartmentID == id64(t.DepartmentID),
		u.Category == nil || *u.Category == str(t.Category),
		u.SubCategory == nil || *u.SubCategory == str(t.SubCategory),
		u.ItemCategory == nil || *u.ItemCategory == str(t.ItemCategory),
		u.DueBy == nil || (t.DueBy != nil && u.DueBy.Equal(*t.DueBy)),
		u.FrDueBy == nil || (t.FrDueBy != nil && u.FrDueBy.Equal(*t.FrDueBy)),
	}
	for _, ok := range checks {
		if !ok {
			return false, nil
		}
	}
	if u.Tags != nil {
		have := map[string]bool{}
		for _, tag := range t.Tags {
			have[strings.ToLower(tag)] = true
		}
		for _, tag := range *u.Tags {
			if !have[strings.ToLower(tag)] {
				return false, nil
			}
		}
	}
	for k, v := range u.CustomFields {
		hv, ok := t.CustomFields[k]
		if !ok || !(same(v, hv) || fmt.Sprint(v) == fmt.Sprint(hv)) {
			return false, nil
		}
	}
	return true, nil
}
