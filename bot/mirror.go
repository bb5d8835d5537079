package bot

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Mirror is deskbot's copy of the desk's tickets in the state store, which
// the scheduler's leader keeps up to date from the desk's change feed
// (*store.Store implements it). Commands that need only a ticket's fields
// (/ticket why, /ticket mine, /ticket unassigned) answer from it and spend
// nothing at the desk. Workspace 0 is the account's default workspace.
type Mirror interface {
	MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error)
	MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error)
}

// WithMirror answers /ticket why, /ticket mine and /ticket unassigned from
// the ticket mirror, saying how fresh it is; they read the desk, saying so,
// only where the mirror cannot answer (not built yet, not complete, not
// kept up to date, or not holding the ticket). Give it only where a
// scheduler keeps the mirror.
func WithMirror(m Mirror) Option {
	return func(c *routerConfig) { c.mirror = m }
}

// MirrorUpdater takes in a ticket as the desk answered a request of
// deskbot's (feed.LiveMirror implements it), so that the mirror shows
// what deskbot changed at once: read your own writes. It must not block.
type MirrorUpdater interface {
	Observe(t *sdclient.Ticket)
}

// WithMirrorUpdates hands every ticket the desk answers the router's
// requests with (a ticket created, updated by a command or a button, or
// read) to u, so that the next answer, the Home tab and the rules see the
// change without waiting for the change feed.
func WithMirrorUpdates(u MirrorUpdater) Option {
	return func(c *routerConfig) { c.updates = u }
}

// mirrorMaxLag is how far the mirror's cursor may be behind deskbot's
// clock for commands to trust it. The scheduler moves the cursor every
// cycle (a minute, usually); a cursor further behind means nobody keeps
// the mirror (the scheduler stopped, its leader is gone, the desk has
// been failing), and a list from it could be badly out of date.
const mirrorMaxLag = 15 * time.Minute

// mirrorCache keeps the last load of each workspace's mirror and reloads
// it only when the store's version of it changed (the scheduler applies
// its changes about once a cycle), so a burst of commands costs one
// MirrorStates read each.
type mirrorCache struct {
	src Mirror
	mu  sync.Mutex // held while loading: concurrent commands share a load
	ws  map[int64]*mirrorWS
}

// mirrorWS is one load of one workspace's mirror. It is never changed
// after the load; its tickets are shared and must not be modified.
type mirrorWS struct {
	key     int64 // the mirror's workspace key (0: the default workspace)
	state   store.MirrorState
	tickets []*sdclient.Ticket // ordered by id
	byID    map[int64]*sdclient.Ticket
	// home is the workspace id its tickets carry (the default
	// workspace's id, for key 0), 0 when they carry none.
	home int64
}

func newMirrorWS(key int64, tickets []*sdclient.Ticket, st store.MirrorState) *mirrorWS {
	m := &mirrorWS{key: key, state: st, tickets: tickets, byID: make(map[int64]*sdclient.Ticket, len(tickets)), home: key}
	seen := map[int64]int{}
	for _, t := range tickets {
		m.byID[t.ID] = t
		if t.WorkspaceID != nil {
			seen[*t.WorkspaceID]++
		}
	}
	if key == 0 {
		// The default workspace's id is the one its tickets carry (a
		// ticket moved away may linger until the next full sync).
		for ws, n := range seen {
			if n > seen[m.home] || (n == seen[m.home] && ws < m.home) {
				m.home = ws
			}
		}
	}
	return m
}

// mirrorView is the mirror of every workspace at one moment.
type mirrorView struct {
	ws map[int64]*mirrorWS // by mirror key
}

// mirrorReadTimeout bounds a read of the mirror: it comes from memory on
// the replica that leads, from the store elsewhere, and a store that does
// not answer by then makes the command say so rather than wait.
const mirrorReadTimeout = 5 * time.Second

// view returns the current mirror, loading the workspaces whose version
// changed since the last load.
func (c *mirrorCache) view(ctx context.Context) (*mirrorView, error) {
	ctx, cancel := context.WithTimeout(ctx, mirrorReadTimeout)
	defer cancel()
	states, err := c.src.MirrorStates(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v := &mirrorView{ws: make(map[int64]*mirrorWS, len(states))}
	for key, st := range states {
		m := c.ws[key]
		if m == nil || m.state.Version != st.Version {
			tickets, loaded, err := c.src.MirrorLoad(ctx, key)
			if err != nil {
				return nil, err
			}
			m = newMirrorWS(key, tickets, loaded)
			c.ws[key] = m
		}
		v.ws[key] = m
	}
	maps.DeleteFunc(c.ws, func(key int64, _ *mirrorWS) bool { return v.ws[key] == nil })
	return v, nil
}

// built reports whether any workspace's mirror has started following the
// change feed.
func (v *mirrorView) built() bool {
	for _, m := range v.ws {
		if !m.state.Cursor.IsZero() {
			return true
		}
	}
	return false
}

// forWorkspace is the mirror of workspace ws as a desk query names it (0:
// the default workspace), nil when deskbot does not mirror it.
func (v *mirrorView) forWorkspace(ws int64) *mirrorWS {
	if m := v.ws[ws]; m != nil {
		return m
	}
	if m := v.ws[0]; m != nil && ws != 0 && m.home == ws {
		return m
	}
	return nil
}

// lag is how far the mirror's cursor is behind now.
func (m *mirrorWS) lag(now time.Time) time.Duration { return now.Sub(m.state.Cursor) }

// errMirrorUnread answers a command whose mirror read failed: it does not
// spend the desk budget instead (people first: a slow store must not turn
// into desk requests that leave the budget spent).
func (r *Router) errMirrorUnread(err error, args ...any) error {
	r.log.Warn("cannot read the ticket mirror; the desk is not asked instead", append(args, "err", err)...)
	return refuse("deskbot's mirror of the tickets could not be read just now; try again in a moment (the desk was not asked, to keep its request budget)")
}

// mirrorTicket reads ticket id from the mirror. Without it, source says
// why the ticket is to be read from the desk; with it, how fresh the copy
// is. The ticket returned is the caller's to keep. A mirror that cannot be
// read is an error: the desk is not read instead.
func (r *Router) mirrorTicket(ctx context.Context, id int64) (t *sdclient.Ticket, source string, err error) {
	v, err := r.mirror.view(ctx)
	if err != nil {
		return nil, "", r.errMirrorUnread(err, "ticket", id)
	}
	if !v.built() {
		return nil, "Read from the desk: the mirror is not built yet.", nil
	}
	now := r.now()
	for _, key := range slices.Sorted(maps.Keys(v.ws)) {
		m := v.ws[key]
		held := m.byID[id]
		if held == nil {
			continue
		}
		if m.state.Cursor.IsZero() {
			return nil, "Read from the desk: the mirror is not built yet.", nil
		}
		if m.lag(now) > mirrorMaxLag {
			return nil, fmt.Sprintf("Read from the desk: deskbot's mirror is too old to trust (%s, more than %s ago).",
				store.MirrorAsOf(m.state.Cursor, now), minutes(mirrorMaxLag)), nil
		}
		c := *held
		return &c, fmt.Sprintf("From deskbot's mirror, %s (change feed cursor); the desk was not asked.", store.MirrorAsOf(m.state.Cursor, now)), nil
	}
	return nil, fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.", id), nil
}

// mirrorLists decides, for each workspace of a list command, whether the
// mirror answers for it: it must hold every open ticket (a full sync
// finished) and be kept up to date. It returns the mirrors that answer,
// by workspace, and the note that says how fresh the answer is and which
// workspaces were read from the desk, and why; "" without a mirror. A
// mirror that cannot be read is an error: the desk is not read instead.
func (r *Router) mirrorLists(ctx context.Context, workspaces []int64) (map[int64]*mirrorWS, string, error) {
	if r.mirror == nil {
		return nil, "", nil
	}
	v, err := r.mirror.view(ctx)
	if err != nil {
		return nil, "", r.errMirrorUnread(err)
	}
	now := r.now()
	use := map[int64]*mirrorWS{}
	var oldest time.Time
	var desk []string // why each workspace not answered from the mirror was read from the desk
	for _, ws := range workspaces {
		m := v.forWorkspace(ws)
		var why string
		switch {
		case m == nil && !v.built():
			why = "the mirror is not built yet"
		case m == nil:
			why = "deskbot does not mirror it"
		case !m.state.Complete || m.state.Cursor.IsZero():
			why = "the mirror's first full sync has not finished"
		case m.lag(now) > mirrorMaxLag:
			why = fmt.Sprintf("deskbot's mirror is too old to trust (%s, more than %s ago)", store.MirrorAsOf(m.state.Cursor, now), minutes(mirrorMaxLag))
		default:
			use[ws] = m
			if oldest.IsZero() || m.state.Cursor.Before(oldest) {
				oldest = m.state.Cursor
			}
			continue
		}
		if len(workspaces) > 1 {
			why = fmt.Sprintf("%s: %s", r.workspaceName(ctx, ws), why)
		}
		desk = append(desk, why)
	}
	var note string
	switch {
	case len(use) == 0:
		note = "read from the desk: " + joinReasons(desk)
	case len(desk) == 0:
		note = "from deskbot's mirror, " + store.MirrorAsOf(oldest, now)
	default:
		note = fmt.Sprintf("from deskbot's mirror, %s; read from the desk for %s", store.MirrorAsOf(oldest, now), joinReasons(desk))
	}
	return use, note, nil
}

func joinReasons(rs []string) string { return strings.Join(rs, "; ") }

// mirrorList answers a list command for one workspace from its mirror:
// the open tickets that match and that the caller may act on, in the
// desk's order of a filter result, at most limit of them, and how many
// there are.
func mirrorList(m *mirrorWS, ws int64, ac access, match func(*sdclient.Ticket) bool, limit int) ([]*sdclient.Ticket, int) {
	var out []*sdclient.Ticket
	for _, t := range m.tickets {
		if t.Deleted || t.Spam || (ws != 0 && t.WorkspaceID != nil && *t.WorkspaceID != ws) {
			continue // the desk's filter leaves them out too
		}
		if match(t) && ac.denied(t) == "" {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, deskOrder)
	return out[:min(len(out), limit)], len(out)
}

// deskOrder is the order of the desk's filter results: the newest created
// first (to the second), then the higher id.
func deskOrder(a, b *sdclient.Ticket) int {
	if c := cmp.Compare(b.CreatedAt.Unix(), a.CreatedAt.Unix()); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// minutes is a whole number of minutes in words.
func minutes(d time.Duration) string { return fmt.Sprintf("%d minutes", int(d/time.Minute)) }
