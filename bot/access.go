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

// scopedQuery is a filter query narrowed to what an agent may act on, as
// the desk can take it. The desk counts and pages only what the agent may
// see, and never is a query wider than the scope sent: when q within the
// scope is longer than the desk accepts, it is split instead.
type scopedQuery struct {
	// whole is q within the scope, when it fits in one query (q itself
	// when the scope is every ticket).
	whole string
	// Otherwise mine is q AND agent_id:ME, and each chunk is q AND one
	// share of the agent's groups. The chunks are disjoint (a ticket has
	// one group) but each may share with mine the agent's own tickets of
	// its groups.
	mine   string
	chunks []scopeChunk
	groups []int64 // the groups of the chunks, to count what they share with mine
}

// scopeChunk is one share of the groups of a split scope.
type scopeChunk struct {
	query string // q AND (group_id:G1 OR group_id:G2 ...)
	mine  string // q AND agent_id:ME AND (group_id:G1 OR ...): what it shares with mine
}

// requests is how many searches the desk is sent for one workspace, at
// least (a split scope may ask a chunk's mine too, see searchScoped).
func (sq scopedQuery) requests() int {
	if sq.whole != "" {
		return 1
	}
	return 1 + len(sq.chunks)
}

// scopeQueries narrows the filter query q to the tickets the scope lets the
// agent see: q AND (group_id:G OR ... OR agent_id:ME), or q when the scope
// is every ticket. When that is longer than limit, the scope is split into
// q AND agent_id:ME and q AND (a share of the groups), each short enough
// that even its overlap with the first fits; when not even one group fits,
// it refuses: a query wider than the scope is never the answer, as the
// desk's count of it would tell how many tickets outside the scope match.
func (ac access) scopeQueries(q string, limit int) (scopedQuery, error) {
	if ac.all {
		return scopedQuery{whole: q}, nil
	}
	e, err := filter.Parse(q)
	if err != nil {
		return scopedQuery{}, fmt.Errorf("narrow query to your scope: %w", err)
	}
	and := func(xs ...filter.Expr) string { return fmt.Sprint(&filter.And{Exprs: xs}) }
	anyOf := func(xs []filter.Expr) filter.Expr {
		if len(xs) == 1 {
			return xs[0]
		}
		return &filter.Or{Exprs: xs}
	}
	tooLong := func(n int) error {
		return refuse("your search plus your access scope is longer than the desk accepts (%d characters, at most %d); shorten your search", n, limit)
	}
	me := &filter.Term{Field: "agent_id", Op: filter.OpEq, Value: filter.Number(ac.agentID)}
	var groups []filter.Expr
	for _, g := range ac.groups {
		groups = append(groups, &filter.Term{Field: "group_id", Op: filter.OpEq, Value: filter.Number(g)})
	}
	whole := and(e, anyOf(append(slices.Clip(groups), me)))
	if len(whole) <= limit {
		return scopedQuery{whole: whole}, nil
	}
	if len(groups) == 0 {
		return scopedQuery{}, tooLong(len(whole))
	}
	sq := scopedQuery{mine: and(e, me), groups: ac.groups}
	// The longest query of a chunk is its overlap with mine.
	overlap := func(c []filter.Expr) string { return and(e, me, anyOf(c)) }
	flush := func(c []filter.Expr) {
		sq.chunks = append(sq.chunks, scopeChunk{query: and(e, anyOf(c)), mine: overlap(c)})
	}
	var cur []filter.Expr
	for _, g := range groups {
		if next := append(slices.Clip(cur), g); len(cur) > 0 && len(overlap(next)) <= limit {
			cur = next
			continue
		}
		if len(cur) > 0 {
			flush(cur)
		}
		cur = []filter.Expr{g}
		if n := len(overlap(cur)); n > limit {
			return scopedQuery{}, tooLong(n)
		}
	}
	flush(cur)
	return sq, nil
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
		var err error
		if t, c.source, err = r.mirrorTicket(ctx, c.ticket); err != nil {
			return err
		}
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
