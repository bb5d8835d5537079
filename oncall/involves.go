package oncall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Involves reports whether a person, known by e-mail and Slack user id
// (either may be empty), is one of the people of the policy: a member of a
// schedule one of its levels names (in the rotation or in an override) or
// the person of a user: level. The chat lets them acknowledge and escalate
// the policy's pages although they need not be agents of the desk, while
// anyone else in the workspace may not. Involves does not count the members
// of group: levels (they are known only to Slack): InvolvesWithGroups does.
// E-mails match case-insensitively, Slack ids exactly; a nil policy
// involves nobody.
func (p *Policy) Involves(email, slackID string) bool {
	if p == nil {
		return false
	}
	for _, lv := range p.Levels {
		switch lv.Kind {
		case TargetPerson:
			if samePerson(lv.Name, email, slackID) {
				return true
			}
		case TargetSchedule:
			if lv.Schedule.involves(email, slackID) {
				return true
			}
		}
	}
	return false
}

// GroupMembers resolves the group of a group: level, as the rules file
// names it (a Slack user group id such as S0123ABC, or a @handle), to the
// Slack user ids of its members. The chat implements it (Slack's
// usergroups.users.list), so that the people a group level pages may
// acknowledge what they were paged for.
type GroupMembers interface {
	GroupMembers(ctx context.Context, group string) ([]string, error)
}

// Groups returns the groups of the policy's group: levels as the rules
// file names them, in level order, each once.
func (p *Policy) Groups() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, lv := range p.Levels {
		if lv.Kind == TargetGroup && !slices.Contains(out, lv.Name) {
			out = append(out, lv.Name)
		}
	}
	return out
}

// InvolvesWithGroups is Involves that also counts the members of the
// policy's group: levels, resolved through g, matched by Slack user id.
// Groups are resolved only when no schedule or user: level involves the
// person. A group that cannot be resolved counts nobody: ok is then false
// and err says which group failed, so that the caller can tell a refusal
// from an outage. g nil or slackID empty: Involves.
func (p *Policy) InvolvesWithGroups(ctx context.Context, email, slackID string, g GroupMembers) (ok bool, err error) {
	if p.Involves(email, slackID) {
		return true, nil
	}
	if g == nil || slackID == "" {
		return false, nil
	}
	var errs []error
	for _, grp := range p.Groups() {
		members, err := g.GroupMembers(ctx, grp)
		if err != nil {
			errs = append(errs, fmt.Errorf("members of group %s of policy %s: %w", grp, p.Name, err))
			continue
		}
		if slices.Contains(members, slackID) {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}

// involves reports whether the person is a member of the schedule or of
// one of its overrides.
func (s *Schedule) involves(email, slackID string) bool {
	if s == nil {
		return false
	}
	for _, m := range s.Members {
		if samePerson(m, email, slackID) {
			return true
		}
	}
	for _, o := range s.Overrides {
		if samePerson(o.Member, email, slackID) {
			return true
		}
	}
	return false
}

// samePerson reports whether member (an e-mail or a Slack user id, as the
// rules file gives it) is the person with that e-mail or Slack id.
func samePerson(member, email, slackID string) bool {
	if strings.Contains(member, "@") {
		email = strings.TrimSpace(email)
		return email != "" && strings.EqualFold(member, email)
	}
	return slackID != "" && member == slackID
}
