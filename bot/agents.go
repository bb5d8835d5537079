package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/sdclient"
)

// maxAgentsRead bounds the agents /ticket agents reads from the desk (5
// pages of 100); maxAgentsShown how many one answer lists.
const (
	maxAgentsRead  = 500
	maxAgentsShown = 15
	maxGroupsShown = 15
)

// cmdAgents lists the active agents who share a workspace with the caller,
// and the groups, whose name (or e-mail) holds every word typed: whom
// /assign can name. The list is cached like the groups (ten minutes).
func (r *Router) cmdAgents(ctx context.Context, c *call) (Reply, error) {
	typed, page, err := cutPage(" "+c.p.Text, (maxAgentsRead+maxAgentsShown-1)/maxAgentsShown, fmt.Sprintf("%d agents each", maxAgentsShown))
	if err != nil {
		return Reply{}, err
	}
	words := strings.Fields(strings.ToLower(typed))
	has := func(s string) bool {
		s = strings.ToLower(s)
		for _, w := range words {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}
	agents, truncated, err := r.agentList(ctx)
	if err != nil {
		return Reply{}, err
	}
	var match []*sdclient.Agent
	for _, a := range agents {
		if a.Active && sharesWorkspace(c.agent, a) && has(a.Name()+" "+a.Email) {
			match = append(match, a)
		}
	}
	title := "Agents to assign to"
	if len(words) > 0 {
		title += " matching " + strings.Join(words, " ")
	}
	card := &Card{Title: fmt.Sprintf("%s: %d", title, len(match))}
	from := (page - 1) * maxAgentsShown
	if from >= len(match) && page > 1 {
		return Reply{}, refuse("%s: %d, so there is no page %d", title, len(match), page)
	}
	shown := match[min(from, len(match)):min(from+maxAgentsShown, len(match))]
	for _, a := range shown {
		card.Lines = append(card.Lines, fmt.Sprintf("%s — %s", a.Name(), a.Email))
	}
	if len(shown) < len(match) {
		note := fmt.Sprintf("showing %d–%d of %d", from+1, from+len(shown), len(match))
		if from+len(shown) < len(match) {
			note += fmt.Sprintf("; next: %s page %d", strings.Join(append([]string{"/assign list"}, words...), " "), page+1)
		}
		card.Notes = append(card.Notes, note+"; or add a word of the name or e-mail to narrow, e.g. /assign list smith")
	}
	if len(match) == 0 {
		card.Lines = []string{"no agent found"}
	}
	if groups := r.groupsField(ctx, has); groups != nil {
		card.Fields = append(card.Fields, *groups)
	}
	if truncated {
		card.Notes = append(card.Notes, fmt.Sprintf("read the first %d agents of the desk only", maxAgentsRead))
	}
	card.Notes = append(card.Notes, "assign with /assign N e-mail, /assign N @person or /assign N me")
	return Reply{Text: card.Title, Card: card}, nil
}

// groupsField is the Groups field of /assign list: the groups whose name
// has says yes to, at most maxGroupsShown of them; nil when none.
func (r *Router) groupsField(ctx context.Context, has func(string) bool) *chat.Field {
	var groups []string
	for _, g := range r.cachedGroups(ctx, 5*time.Second) {
		if has(g.Name) {
			groups = append(groups, g.Name)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	more := ""
	if len(groups) > maxGroupsShown {
		more = fmt.Sprintf(" and %d more", len(groups)-maxGroupsShown)
		groups = groups[:maxGroupsShown]
	}
	return &chat.Field{Label: "Groups", Value: strings.Join(groups, ", ") + more}
}

// sharesWorkspace: an agent of the caller's workspaces (either without
// workspaces: yes).
func sharesWorkspace(caller, a *sdclient.Agent) bool {
	if len(caller.WorkspaceIDs) == 0 || len(a.WorkspaceIDs) == 0 {
		return true
	}
	for _, ws := range a.WorkspaceIDs {
		if slices.Contains(caller.WorkspaceIDs, ws) {
			return true
		}
	}
	return false
}

// agentList is the desk's agents sorted by name, cached for ten minutes.
func (r *Router) agentList(ctx context.Context) ([]*sdclient.Agent, bool, error) {
	now := r.now()
	if l, ok := fresh(r, &r.agentsList, now, 10*time.Minute); ok {
		return l.v.agents, l.v.more, nil
	}
	var v agentPage
	err := r.retrying(ctx, true, func(ctx context.Context) error {
		var err error
		v.agents, v.more, err = r.desk.Agents(ctx, maxAgentsRead)
		return err
	})
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list agents: %w", err)
	}
	slices.SortFunc(v.agents, func(a, b *sdclient.Agent) int {
		return strings.Compare(strings.ToLower(a.Name()), strings.ToLower(b.Name()))
	})
	keep(r, &r.agentsList, v, now)
	return v.agents, v.more, nil
}

type agentPage struct {
	agents []*sdclient.Agent
	more   bool
}
