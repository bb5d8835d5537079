package bot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
)

// workspaceNamesTTL is how long the workspaces' names are kept: they
// rarely change.
const workspaceNamesTTL = time.Hour

// workspaceName names workspace ws for people: "workspace HR", or its
// id when the desk cannot list workspaces ("workspace 3"). The names
// are read once an hour, and kept when the desk cannot be asked.
func (r *Router) workspaceName(ctx context.Context, ws int64) string {
	if ws == 0 {
		return "the default workspace"
	}
	now := r.now()
	c, ok := fresh(r, &r.workspaces, now, workspaceNamesTTL)
	if !ok {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		list, err := r.desk.Workspaces(ctx)
		cancel()
		switch {
		case err == nil:
			names := make(map[int64]string, len(list))
			for _, w := range list {
				names[w.ID] = w.Name
			}
			keep(r, &r.workspaces, names, now)
			c.v = names
		case errors.Is(err, errors.ErrUnsupported):
			// The desk names no workspace: ids it is, not asked again
			// within the hour.
			keep(r, &r.workspaces, c.v, now)
		default:
			r.log.Warn("cannot list the desk's workspaces; naming them by id", "err", err)
		}
	}
	if name := c.v[ws]; name != "" {
		return "workspace " + name
	}
	return fmt.Sprintf("workspace %d", ws)
}

// knownAgentName is the name of agent id that deskbot already knows from
// any of its caches, however old ("" if none): what a card shows while the
// desk cannot be asked.
func (r *Router) knownAgentName(id int64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := r.names[id]; n.ok {
		return n.v
	}
	for _, a := range r.agents {
		if a.v != nil && a.v.ID == id {
			return a.v.Name()
		}
	}
	for _, a := range r.agentsList.v.agents {
		if a.ID == id {
			return a.Name()
		}
	}
	return ""
}

// slackUserID is how a schedule names a Slack user by id (U0CAROL01).
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

// memberName is how a text answer names a schedule member: the desk
// agent's name for an agent's e-mail (or a Slack user the chat can say
// the e-mail of), else the e-mail, and a Slack user the chat cannot look
// up as such ("Slack user U0CAROL01"), never a bare id. (Slack's markup
// mentions them instead: see Mentioner.)
func (r *Router) memberName(ctx context.Context, caller chat.Caller, member string) string {
	email := member
	if slackUserID.MatchString(member) {
		email = ""
		if caller.Users != nil {
			email, _ = caller.Users.Email(ctx, member)
		}
		if email == "" {
			return "Slack user " + member
		}
	}
	if !strings.Contains(email, "@") {
		return member
	}
	if a, err := r.agentByEmail(ctx, email); err == nil && a != nil && a.Name() != "" {
		return a.Name()
	}
	return email
}
