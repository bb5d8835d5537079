package bot

import (
	"context"
	"errors"
	"fmt"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// pagePermit returns the caller's e-mail when they may act on page key
// (verb: acknowledge or escalate) of the call's ticket, and a refusal
// otherwise.
func (r *Router) pagePermit(ctx context.Context, c *call, key, verb string) (string, error) {
	email, err := r.callerEmail(ctx, c.caller)
	if err != nil {
		return "", err
	}
	p, found, err := r.oncall.Page(ctx, key)
	if err != nil {
		return "", fmt.Errorf("read page %s: %w", key, err)
	}
	if !found {
		return "", refuse("this page (%s) is not known here any more", key)
	}
	if p.TicketID != c.ticket {
		// The button's ticket decides whose access is checked: it must
		// be the page's.
		return "", refuse("this button names ticket #%d, but its page (%s) is of another ticket", c.ticket, key)
	}
	g := &pageGate{r: r, c: c, email: email}
	switch v, err := g.may(ctx, p); {
	case err != nil:
		return "", err
	case v == pageOutOfScope:
		return "", g.scope
	case v == pageNotInvolved:
		return "", refuse("%s", pageRefusal(p.Policy, verb, email))
	}
	return email, nil
}

// pageVerdict says whether a person may act on a page, and if not, why.
type pageVerdict int

const (
	pageAllowed     pageVerdict = iota
	pageNotInvolved             // neither a desk agent nor one of the policy's people
	pageOutOfScope              // an agent, not one of the policy's people, and the ticket is outside their access
)

// pageGate decides which pages of the call's ticket its caller may
// acknowledge or escalate. The people of a page's policy may (members of
// its schedules and their overrides, its user: levels, and the members of
// its group: levels when the chat can list them): the rules file sends
// them the page, ticket number and text, so they need not be agents and
// their access to the ticket does not matter. A desk agent may when the
// ticket is within their access, by the rules of /ticket show (see
// access.go). Anyone else in the workspace may not, so that nobody outside
// can silently stop an escalation, nor learn from the answer whether the
// ticket has pages or who acknowledged them. The gate looks the caller up
// as an agent and reads the ticket at most once each, and only when the
// policy alone does not decide.
type pageGate struct {
	r     *Router
	c     *call // the caller's request and the ticket; its agent and t are filled in here
	email string

	looked bool            // the caller was looked up as an agent
	agent  *sdclient.Agent // nil: not an agent
	scoped bool            // the ticket was checked against the agent's access
	scope  error           // nil: within it; the refusal (or failure) otherwise
}

// lookup looks the caller up as an agent, once.
func (g *pageGate) lookup(ctx context.Context) (*sdclient.Agent, error) {
	if !g.looked {
		a, err := g.r.agentByEmail(ctx, g.email)
		if err != nil {
			return nil, err
		}
		g.agent, g.looked = a, true
	}
	return g.agent, nil
}

// inScope checks the ticket against the agent's access, once: nil when
// the agent may act on it, the refusal of /ticket show otherwise (or why
// the ticket could not be read). An agent whose access is every ticket of
// every workspace needs no read.
func (g *pageGate) inScope(ctx context.Context) error {
	if !g.scoped {
		if ac := accessOf(g.agent); !ac.all || len(ac.workspaces) > 0 {
			g.c.agent, g.c.email = g.agent, g.email
			g.scope = g.r.permit(ctx, g.c)
		}
		g.scoped = true
	}
	return g.scope
}

// may decides whether the caller may act on page p of the ticket. An error
// is a failure to decide (the desk or the store), never a refusal.
func (g *pageGate) may(ctx context.Context, p oncall.Page) (pageVerdict, error) {
	pol := g.r.oncall.Config().Policy(p.Policy)
	if pol.Involves(g.email, g.c.caller.UserID) {
		return pageAllowed, nil
	}
	a, err := g.lookup(ctx)
	if err != nil {
		return 0, err
	}
	if a != nil {
		err := g.inScope(ctx)
		if err == nil {
			return pageAllowed, nil
		}
		var ref *refusal
		if !errors.As(err, &ref) {
			return 0, err
		}
	}
	// Groups are asked last: they cost a chat call when their cached
	// members have expired.
	gm, _ := g.c.caller.Users.(oncall.GroupMembers)
	ok, err := pol.InvolvesWithGroups(ctx, g.email, g.c.caller.UserID, gm)
	if err != nil && !ok {
		g.r.log.Warn("cannot read the members of an on-call group; counting nobody of it", "policy", p.Policy, "err", err)
	}
	switch {
	case ok:
		return pageAllowed, nil
	case a != nil:
		return pageOutOfScope, nil
	}
	return pageNotInvolved, nil
}

// pageRefusal tells a caller why they may not act on a page of policy.
func pageRefusal(policy, verb, email string) string {
	return fmt.Sprintf("only desk agents and the people on %s's rota can %s its pages; %s is neither", policy, verb, email)
}

// refusal says why the caller may not acknowledge a page of policy.
func (g *pageGate) refusal(v pageVerdict, policy string) string {
	if v == pageOutOfScope {
		return fmt.Sprintf("you are not on %s's rota, and %v", policy, g.scope)
	}
	return pageRefusal(policy, "acknowledge", g.email)
}
