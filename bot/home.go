package bot

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/internal/flight"
	"github.com/deskbot/deskbot/oncall"

	"github.com/deskbot/deskbot/sdclient"
)

// DefaultHomeInterval is how often at most a person's home is rebuilt:
// opening the Home tab again within it shows what it showed.
const DefaultHomeInterval = 30 * time.Second

// homeLimit is how many tickets each list of a home shows; the rest is a
// count ("and 12 more").
const homeLimit = 15

// WithHomeInterval sets how often at most one person's home is rebuilt
// (default DefaultHomeInterval); 0 rebuilds it on every open.
func WithHomeInterval(d time.Duration) Option {
	return func(c *routerConfig) { c.homeInterval = &d }
}

// homeCache is the homes built in the last interval, by chat user id;
// concurrent opens by one person share one build.
type homeCache struct {
	interval time.Duration
	byUser   map[string]chat.Home
	builds   flight.Group[chat.Home]
}

// initHomes sets up the homes' caches (NewRouter).
func (r *Router) initHomes(cfg *routerConfig) {
	r.homes = homeCache{interval: DefaultHomeInterval, byUser: map[string]chat.Home{}}
	if cfg.homeInterval != nil {
		r.homes.interval = *cfg.homeInterval
	}
	r.requesterIDs = map[string]cached[int64]{}
}

// Home builds what the caller's home shows: their open tickets as agent
// (assigned to them, within their access scope) and as requester, from
// the ticket mirror where it can answer and from the desk otherwise, who
// is on call now, and the quick actions. A home built less than the home
// interval ago is returned again as it was (same BuiltAt, Fresh false), at
// no cost: a transport need not show it again; so is one being built for
// the same person when the call came. It never fails: what could not be
// read is said in the home.
func (r *Router) Home(ctx context.Context, caller chat.Caller) chat.Home {
	if h, ok := r.recentHome(caller.UserID, r.now()); ok {
		return h
	}
	led := false
	h, err := r.homes.builds.Do(caller.UserID, func() (chat.Home, error) {
		led = true
		now := r.now()
		if h, ok := r.recentHome(caller.UserID, now); ok {
			return h, nil
		}
		h := r.safeBuildHome(ctx, caller, now)
		h.Fresh = true
		r.mu.Lock()
		for u, old := range r.homes.byUser { // keep the cache to the last interval
			if now.Sub(old.BuiltAt) >= r.homes.interval {
				delete(r.homes.byUser, u)
			}
		}
		r.homes.byUser[caller.UserID] = h
		r.mu.Unlock()
		return h, nil
	})
	if err != nil {
		return chat.Home{NoAccount: chat.PanicText("your home"), BuiltAt: r.now()}
	}
	if !led {
		h.Fresh = false // the caller that built it shows it
	}
	return h
}

// recentHome is the home built for user less than the interval before
// now, not Fresh.
func (r *Router) recentHome(user string, now time.Time) (chat.Home, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.homes.byUser[user]
	if !ok || now.Sub(h.BuiltAt) >= r.homes.interval {
		return chat.Home{}, false
	}
	h.Fresh = false
	return h, true
}

// safeBuildHome is buildHome under the command deadline, a panic turned
// into a home that says so.
func (r *Router) safeBuildHome(ctx context.Context, caller chat.Caller, now time.Time) (h chat.Home) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("building a home panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			h = chat.Home{NoAccount: chat.PanicText("your home"), BuiltAt: now}
		}
	}()
	return r.buildHome(ctx, caller, now)
}

func (r *Router) buildHome(ctx context.Context, caller chat.Caller, now time.Time) chat.Home {
	h := chat.Home{BuiltAt: now, Actions: []chat.Button{
		{ActionID: chat.ActionHomeNewTicket, Label: "New ticket", Style: "primary"},
		{ActionID: chat.ActionHomeMyQueue, Label: "My queue"},
	}}
	h.OnCall, h.OnCallMarkup = r.homeOnCall(ctx, caller, now)
	email, err := r.callerEmail(ctx, caller)
	if err != nil {
		h.NoAccount = r.homeTrouble(caller, err)
		return h
	}
	agent, err := r.agentByEmail(ctx, email)
	if err != nil {
		h.NoAccount = r.homeTrouble(caller, err)
		return h
	}
	reqID, err := r.requesterID(ctx, email, agent)
	if err != nil {
		h.NoAccount = r.homeTrouble(caller, err)
		return h
	}
	if agent == nil && reqID == 0 {
		h.NoAccount = fmt.Sprintf("The desk has no account for %s, so there are no tickets to show. "+
			"Open a ticket with the New ticket button (or /ticket new) and the desk makes you one.", email)
		return h
	}
	choices := r.statusChoices(ctx)
	c := &call{caller: caller, cmd: lookup(r.table, "ticket mine"), email: email, agent: agent}
	if agent != nil {
		h.Agent = true
		h.Assigned = r.homeList(ctx, c, choices, fmt.Sprintf("agent_id:%d", agent.ID), true, func(t *sdclient.Ticket) bool {
			return t.ResponderID != nil && *t.ResponderID == agent.ID
		})
	}
	if reqID != 0 {
		h.Requested = r.homeList(ctx, c, choices, fmt.Sprintf("requester_id:%d", reqID), false, func(t *sdclient.Ticket) bool {
			return t.RequesterID == reqID
		})
	}
	return h
}

// homeTrouble is what a home says when the viewer could not be resolved.
func (r *Router) homeTrouble(caller chat.Caller, err error) string {
	var ref *refusal
	if errors.As(err, &ref) {
		return ref.msg
	}
	r.log.Warn("cannot resolve the viewer of a home", "user", caller.UserID, "err", err)
	if msg, ok := r.deskTrouble(err, 0); ok {
		return "Your tickets cannot be shown right now: " + msg
	}
	return "Your tickets cannot be shown right now: the desk could not be asked who you are (logged). Open the tab again in a minute."
}

// homeOnCall is who is on call now, as text and markup; "" when on-call
// is not configured.
func (r *Router) homeOnCall(ctx context.Context, caller chat.Caller, now time.Time) (text, markup string) {
	if r.oncall == nil {
		return "", ""
	}
	st := r.oncall.WhoIsOnCall(now)
	text = oncall.RenderStatusWith(st, func(member string) string { return r.memberName(ctx, caller, member) })
	if m, ok := caller.Users.(chat.Mentioner); ok && len(st) > 0 {
		markup = oncall.RenderStatusWith(st, func(member string) string { return m.MentionMember(ctx, member) })
	}
	return text, markup
}

// requesterID is the desk id of the person with e-mail email as a
// requester, cached like agents; 0 when the desk knows none. An agent's
// own id stands in when the desk cannot look requesters up or has no
// requester with that e-mail (the desk's agents are requesters too).
func (r *Router) requesterID(ctx context.Context, email string, agent *sdclient.Agent) (int64, error) {
	fallback := int64(0)
	if agent != nil {
		fallback = agent.ID
	}
	key := strings.ToLower(email)
	now := r.now()
	if c, ok := freshIn(r, r.requesterIDs, key, now, r.agentTTL); ok {
		return cmpOr(c.v, fallback), nil
	}
	rq, err := retried(ctx, r, func(ctx context.Context) (*sdclient.TicketRequester, error) {
		return r.desk.RequesterByEmail(ctx, email)
	})
	var id int64
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return fallback, nil
	case errors.Is(err, sdclient.ErrNotFound):
	case err != nil:
		return 0, fmt.Errorf("look up requester %s: %w", email, err)
	default:
		id = rq.ID
	}
	keepIn(r, r.requesterIDs, key, id, now)
	return cmpOr(id, fallback), nil
}

func cmpOr(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

// homeList reads one list of a home: the open tickets matching term (a
// desk filter term) and match (the same as a test of one ticket), in each
// of the caller's workspaces, from the mirror where it can answer and from
// the desk otherwise. scoped lists are narrowed to what the caller may act
// on as an agent; a person's own requests are theirs to see.
func (r *Router) homeList(ctx context.Context, c *call, choices []sdclient.FieldChoice, term string, scoped bool, match func(*sdclient.Ticket) bool) chat.HomeList {
	ac := access{all: true}
	workspaces := []int64{0}
	if c.agent != nil {
		if scoped {
			ac = accessOf(c.agent)
		}
		if len(c.agent.WorkspaceIDs) > 0 {
			workspaces = c.agent.WorkspaceIDs
		}
	}
	open := func(t *sdclient.Ticket) bool { return sdclient.IsOpenStatus(t.Status) && match(t) }
	fromMirror, source, err := r.mirrorLists(ctx, workspaces)
	if err != nil {
		return chat.HomeList{Error: r.homeListTrouble(c, err)}
	}
	if source == "" {
		source = "read from the desk"
	}
	q := term + " AND " + openClause(choices)
	sq, err := r.deskScope(ac, q, workspaces, fromMirror)
	if err != nil {
		return chat.HomeList{Error: r.homeListTrouble(c, err)}
	}
	var all []*sdclient.Ticket
	total := 0
	for _, ws := range workspaces {
		if m := fromMirror[ws]; m != nil {
			ts, n := mirrorList(m, ws, ac, open, homeLimit)
			all, total = append(all, ts...), total+n
			continue
		}
		ts, n, err := r.searchScoped(ctx, sq, ws, ac, homeLimit)
		if err != nil {
			return chat.HomeList{Error: r.homeListTrouble(c, fmt.Errorf("filter tickets in workspace %d: %w", ws, err))}
		}
		all, total = append(all, ts...), total+n
	}
	l := chat.HomeList{Total: total, Source: upperFirst(source)}
	for _, t := range all[:min(len(all), homeLimit)] {
		l.Tickets = append(l.Tickets, chat.HomeTicket{ID: t.ID, Subject: t.Subject, Status: statusName(choices, t.Status),
			Priority: priorityName(t.Priority), URL: r.TicketLink(t.ID)})
	}
	return l
}

// homeListTrouble says why a list of a home could not be read.
func (r *Router) homeListTrouble(c *call, err error) string {
	var ref *refusal
	if errors.As(err, &ref) {
		return ref.msg
	}
	if msg, ok := r.deskTrouble(err, 0); ok {
		return "could not read the desk: " + msg
	}
	r.log.Warn("cannot read a home list", "user", c.caller.UserID, "err", err)
	return "could not read the desk (logged); open the tab again in a minute"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
