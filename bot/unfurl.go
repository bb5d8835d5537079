package bot

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/sdclient"
)

// maxUnfurls bounds the tickets one shared message unfurls (each costs a
// desk request); Slack itself sends at most five links per event.
const maxUnfurls = 5

// Unfurl returns a card for each desk ticket link among urls that the
// caller may see, keyed by the URL as given: the same check as /ticket
// show (an agent of the desk, and the ticket within their workspaces and
// scope). Links to other tickets, other sites, and links shared by someone
// who is not an agent get nothing; nothing is kept beyond the call.
func (r *Router) Unfurl(ctx context.Context, caller Caller, urls []string) map[string]*Card {
	ids := map[string]int64{}
	for _, u := range urls {
		if id, ok := r.TicketIDFromURL(u); ok && len(ids) < maxUnfurls {
			ids[u] = id
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out := map[string]*Card{}
	cmd := lookup(r.table, "ticket show")
	c := &call{caller: caller, cmd: cmd}
	r.run(ctx, "ticket show", func(ctx context.Context) (Reply, error) {
		if err := r.authorise(ctx, c); err != nil {
			return Reply{}, err
		}
		ac := accessOf(c.agent)
		seen := map[int64]*Card{}
		for u, id := range ids {
			if card, ok := seen[id]; ok {
				if card != nil {
					out[u] = card
				}
				continue
			}
			seen[id] = nil
			t, err := r.getTicket(ctx, id, true)
			if err != nil {
				if !errors.Is(err, sdclient.ErrNotFound) {
					r.log.Warn("unfurl a ticket link", "ticket", id, "err", err)
				}
				continue
			}
			if ac.denied(t) != "" {
				continue
			}
			seen[id] = r.unfurlCard(ctx, t)
			out[u] = seen[id]
		}
		return Reply{}, nil
	}, c)
	return out
}

// unfurlCard is the card of an unfurled link: subject, status, priority,
// assignee and the link.
func (r *Router) unfurlCard(ctx context.Context, t *sdclient.Ticket) *Card {
	agent := "unassigned"
	if t.ResponderID != nil && *t.ResponderID != 0 {
		agent = r.agentName(ctx, *t.ResponderID)
	}
	return &Card{
		Title: fmt.Sprintf("#%d %s", t.ID, t.Subject),
		URL:   r.TicketLink(t.ID),
		Fields: []chat.Field{
			{Label: "Status", Value: statusName(r.statusChoices(ctx), t.Status)},
			{Label: "Priority", Value: priorityName(t.Priority)},
			{Label: "Assignee", Value: agent},
		},
	}
}

// TicketIDFromURL reads the ticket number of a desk ticket link: the
// router's link form (by default {desk}/a/tickets/N) and, on the same
// desk, the requester portal's {desk}/helpdesk/tickets/N; a query,
// fragment or final "/" may follow. Scheme and host compare without case.
func (r *Router) TicketIDFromURL(raw string) (int64, bool) {
	if r.link == "" {
		return 0, false
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return 0, false
	}
	pre, suf, _ := strings.Cut(r.link, "{id}")
	forms := [][2]string{{pre, suf}}
	if base, ok := strings.CutSuffix(pre, "/a/tickets/"); ok && suf == "" {
		forms = append(forms, [2]string{base + "/helpdesk/tickets/", ""})
	}
	got := strings.ToLower(u.Scheme+"://"+u.Host) + strings.TrimSuffix(u.EscapedPath(), "/")
	for _, f := range forms {
		fu, err := url.Parse(f[0])
		if err != nil {
			continue
		}
		prefix := strings.ToLower(fu.Scheme+"://"+fu.Host) + fu.EscapedPath()
		rest, ok := strings.CutPrefix(got, prefix)
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(rest, strings.TrimSuffix(f[1], "/"))
		if id, err := strconv.ParseInt(num, 10, 64); ok && err == nil && id > 0 && num[0] != '+' {
			return id, true
		}
	}
	return 0, false
}
