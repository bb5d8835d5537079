package slackchat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
)

// Defaults of the user-group cache: the handle → id map of the workspace
// is listed again when older than groupTTL, and a handle it lacks (a group
// created since) makes it list again at most once every groupWait.
const (
	defaultGroupTTL  = 10 * time.Minute
	defaultGroupWait = time.Minute
)

// groupRef is a user group as mentioned: its id and its handle (no '@').
type groupRef struct{ id, handle string }

// groupCache is what usergroups.list said, guarded by Slack.mu.
type groupCache struct {
	byHandle map[string]groupRef // lower-case handle without '@' -> group
	listed   time.Time           // last successful listing; zero: never
	tried    time.Time           // last attempt, successful or not
	warned   map[string]bool     // handles already logged as unknown
}

var _ chat.Mentioner = (*Slack)(nil)

// MentionMember implements Mentioner: a schedule member given as a Slack
// user id, or as an e-mail of a Slack user (users.lookupByEmail, cached),
// becomes <@U...>; anything else stays text.
func (s *Slack) MentionMember(ctx context.Context, member string) string {
	return s.mention(ctx, person(member))
}

// specialMention is <!here>, <!channel> or <!everyone> for @here,
// @channel and @everyone.
func specialMention(m string) (string, bool) {
	switch strings.ToLower(m) {
	case "@here", "@channel", "@everyone":
		return "<!" + strings.ToLower(m[1:]) + ">", true
	}
	return "", false
}

// groupMention renders a user group given by id (S...) or @handle. A
// handle is looked up with usergroups.list; one that names no group is
// posted as text (Slack notifies nobody) and logged once, with the fix.
func (s *Slack) groupMention(ctx context.Context, g string) string {
	g = strings.TrimSpace(g)
	if m, ok := specialMention(g); ok {
		return m
	}
	if slackGroupID.MatchString(g) {
		return "<!subteam^" + g + ">"
	}
	if !strings.HasPrefix(g, "@") || len(g) < 2 {
		return escape(g)
	}
	if ref, ok := s.groupByHandle(ctx, g[1:]); ok {
		return "<!subteam^" + ref.id + "|@" + escape(ref.handle) + ">"
	}
	return escape(g)
}

// groupByHandle finds a user group by handle in the cache, listing the
// groups again when the cache is stale or lacks the handle, but at most
// once every groupWait.
func (s *Slack) groupByHandle(ctx context.Context, handle string) (groupRef, bool) {
	key := strings.ToLower(handle)
	now := s.now()
	s.mu.Lock()
	ref, found := s.groups.byHandle[key]
	fresh := !s.groups.listed.IsZero() && now.Sub(s.groups.listed) < s.groupTTL
	mayList := s.groups.tried.IsZero() || now.Sub(s.groups.tried) >= s.groupWait
	s.mu.Unlock()
	if found && fresh {
		return ref, true
	}
	if mayList {
		if _, err := s.lookups.Do("usergroups.list", func() (string, error) { return "", s.listGroups(ctx, now) }); err != nil {
			s.log.Warn("cannot list the Slack user groups; @handle mentions are posted as plain text, which notifies nobody (does the Slack app have the usergroups:read scope?)",
				"err", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ref, ok := s.groups.byHandle[key]; ok {
		return ref, true // fresh, or stale when listing failed: better than text
	}
	if !s.groups.listed.IsZero() && !s.groups.warned[key] {
		if s.groups.warned == nil {
			s.groups.warned = make(map[string]bool)
		}
		s.groups.warned[key] = true
		s.log.Warn("mention: no Slack user group has this handle, so it is posted as plain text and Slack notifies nobody; write the group's id (S..., shown in the group's profile in Slack) or a person's e-mail instead",
			"handle", "@"+handle)
	}
	return groupRef{}, false
}

// listGroups replaces the cached groups with usergroups.list's answer.
func (s *Slack) listGroups(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	s.groups.tried = now
	s.mu.Unlock()
	gs, err := s.api.GetUserGroupsContext(ctx)
	if err != nil {
		return fmt.Errorf("usergroups.list: %w", err)
	}
	m := make(map[string]groupRef, len(gs))
	for _, g := range gs {
		if g.ID == "" || g.Handle == "" || g.DateDelete != 0 {
			continue
		}
		m[strings.ToLower(g.Handle)] = groupRef{id: g.ID, handle: g.Handle}
	}
	s.mu.Lock()
	s.groups.byHandle, s.groups.listed = m, now
	s.mu.Unlock()
	return nil
}

// mentionMarkup turns a rule's mention into Slack markup: a user (<@U..>,
// U.., e-mail), a user group (S.., @handle), @here/@channel/@everyone, or
// markup written by hand, passed on as is. An e-mail is looked up like a
// page target's (slackUser: cached, lookups merged).
func (s *Slack) mentionMarkup(ctx context.Context, m string) string {
	m = strings.TrimSpace(m)
	switch {
	case m == "":
		return ""
	case strings.HasPrefix(m, "<") && strings.HasSuffix(m, ">"):
		return m
	case slackUserID.MatchString(m):
		return "<@" + m + ">"
	case strings.HasPrefix(m, "@") || slackGroupID.MatchString(m):
		return s.groupMention(ctx, m)
	case strings.Contains(m, "@"):
		id, err := s.slackUser(ctx, m)
		if err == nil {
			return "<@" + id + ">"
		}
		s.log.Warn("mention: no Slack user with that e-mail", "email", m, "err", err)
	}
	return escape(m)
}
