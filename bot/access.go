package bot

import (
	"context"
	"fmt"
	"slices"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// The bot calls the desk with its own API key, so the desk cannot stop an
// agent from acting in chat on a ticket that the agent could not open in
// the desk. These rules emulate the desk's own (Freshservice's agent
// workspaces and role assignment scopes) and are checked before any command
// or button acts on a ticket:
//
//  1. Workspace: an agent whose workspace_ids is not empty acts only on
//     tickets of those workspaces. A ticket without a workspace_id comes
//     from a desk that does not separate workspaces (Freshservice and the
//     simulator always send it when it does), so this rule does not apply
//     to it. An agent without workspace_ids is not limited by workspace.
//  2. Assignment scope: the widest of the agent's roles decides.
//     entire_helpdesk sees every ticket; member_groups the tickets of a
//     group the agent is a member of (member_of) or that the role names,
//     and those assigned to the agent; specified_groups only the role's
//     groups, and those assigned to the agent; assigned_items only the
//     tickets assigned to the agent. A scope deskbot does not know counts
//     as assigned_items (refuse rather than guess). An agent without any
//     role is not limited: deskbot cannot tell what the desk lets them do.
//
// A refusal names the ticket's number and the rule, never its subject or
// any other field. It is a refusal, not "not found": the desk itself
// answers 403 (not 404) for a ticket outside an agent's scope, ticket
// numbers are account-wide and sequential so that a number existing tells
// nothing, and an agent who was sent a link deserves to know why it does
// not work rather than to doubt the number.

// Assignment scopes of a desk role (Freshservice's roles[].assignment_scope).
const (
	scopeEntire    = "entire_helpdesk"
	scopeMember    = "member_groups"
	scopeSpecified = "specified_groups"
	scopeAssigned  = "assigned_items"
)

// access is what an agent's roles and workspaces let them act on.
type access struct {
	agentID    int64
	workspaces []int64 // empty: any workspace
	all        bool    // every ticket of those workspaces
	groups     []int64 // otherwise: tickets of these groups, and assigned ones
}

// accessOf derives an agent's access from its roles and workspaces.
func accessOf(a *sdclient.Agent) access {
	ac := access{agentID: a.ID, workspaces: a.WorkspaceIDs, all: len(a.Roles) == 0}
	for _, role := range a.Roles {
		switch role.AssignmentScope {
		case scopeEntire:
			ac.all = true
		case scopeMember:
			ac.groups = append(ac.groups, a.MemberOf...)
			ac.groups = append(ac.groups, role.Groups...)
		case scopeSpecified:
			ac.groups = append(ac.groups, role.Groups...)
		}
	}
	if ac.all {
		ac.groups = nil
	} else {
		slices.Sort(ac.groups)
		ac.groups = slices.Compact(ac.groups)
	}
	return ac
}

// denied says why the agent may not act on t, "" when they may.
func (ac access) denied(t *sdclient.Ticket) string {
	if len(ac.workspaces) > 0 && t.WorkspaceID != nil && !slices.Contains(ac.workspaces, *t.WorkspaceID) {
		return "it is outside your workspaces"
	}
	if ac.all {
		return ""
	}
	if t.ResponderID != nil && *t.ResponderID == ac.agentID {
		return ""
	}
	if t.GroupID != nil && slices.Contains(ac.groups, *t.GroupID) {
		return ""
	}
	if len(ac.groups) == 0 {
		return "it is not assigned to you"
	}
	return "it is outside your groups and not assigned to you"
}

// scopeQuery narrows a filter query to the tickets the scope lets the
// agent see (q AND (group_id:G OR ... OR agent_id:ME)); it returns q when
// the scope is every ticket. The desk then counts and pages only what the
// agent may act on, at no extra request.
func (ac access) scopeQuery(q string) (string, error) {
	if ac.all {
		return q, nil
	}
	e, err := filter.Parse(q)
	if err != nil {
		return "", fmt.Errorf("narrow query to your scope: %w", err)
	}
	var or []filter.Expr
	for _, g := range ac.groups {
		or = append(or, &filter.Term{Field: "group_id", Op: filter.OpEq, Value: filter.Number(g)})
	}
	or = append(or, &filter.Term{Field: "agent_id", Op: filter.OpEq, Value: filter.Number(ac.agentID)})
	var scope filter.Expr = &filter.Or{Exprs: or}
	if len(or) == 1 {
		scope = or[0]
	}
	return fmt.Sprint(&filter.And{Exprs: []filter.Expr{e, scope}}), nil
}

// permit reads the call's ticket and refuses when the caller may not act
// on it. The ticket is kept in the call so that the command renders from
// it instead of reading it again. A command that needs only the fields the
// mirror keeps reads it from the mirror when it holds it: the check is
// then made on the mirrored workspace, group and responder.
func (r *Router) permit(ctx context.Context, c *call) error {
	if c.t != nil {
		return nil
	}
	var t *sdclient.Ticket
	if c.cmd.mirrored && r.mirror != nil {
		t, c.source = r.mirrorTicket(ctx, c.ticket)
	}
	if t == nil {
		var err error
		if t, err = r.getTicket(ctx, c.ticket, c.cmd.brief); err != nil {
			return err
		}
	}
	if why := accessOf(c.agent).denied(t); why != "" {
		return refuse("you cannot act on ticket #%d: %s", c.ticket, why)
	}
	c.t = t
	return nil
}
