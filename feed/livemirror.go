package feed

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// People first (issue 22): the mirror as people's commands read it, and
// the tickets deskbot changed for them.

// LiveMirror serves the ticket mirror to people's commands (the bot's
// Mirror: /ticket why, mine, unassigned, search and the Home tab) and
// takes in the tickets deskbot changed for them (Observe).
//
// While the feed it is attached to leads and has loaded its mirror, it
// answers from that feed's memory: a view the mirror publishes
// whenever it changes, which readers take without the mirror's lock. The
// feed holds that lock while it writes the mirror to the store (on
// SQLite, one connection shared with every ledger write), so a command
// never waits on the feed's writes nor reads the store. Otherwise (no
// feed attached, another replica leads, the mirror not loaded yet)
// it reads the store.
type LiveMirror struct {
	store MirrorReader
	feed  atomic.Pointer[Feed]

	mu   sync.Mutex
	seen map[int64]liveServed // by workspace
}

// liveServed is what LiveMirror last served of a workspace, and the
// version it gave it.
type liveServed struct {
	pub     *mirrorPub // the feed's view served; nil: the store's
	stored  int64      // the store's version served
	version int64
}

// MirrorReader reads the ticket mirror the feed keeps in the state store
// (*store.Store implements it).
type MirrorReader interface {
	// MirrorStates reads every workspace's mirror state.
	MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error)
	// MirrorLoad reads workspace ws's mirror, ordered by ticket id.
	MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error)
}

// NewLiveMirror returns a LiveMirror over the store st until Attach gives
// it a feed.
func NewLiveMirror(st MirrorReader) *LiveMirror {
	return &LiveMirror{store: st, seen: map[int64]liveServed{}}
}

// Attach makes l serve f's mirror from memory while f's replica leads
// (WithLeads). (The chat is built before the scheduler and its feed: the
// scheduler alerts through the chat.)
func (l *LiveMirror) Attach(f *Feed) { l.feed.Store(f) }

// memory is the feed's published view of every workspace, or false
// when the store must answer.
func (l *LiveMirror) memory() (map[int64]*mirrorPub, bool) {
	f := l.feed.Load()
	if f == nil || !f.leads() {
		return nil, false
	}
	out := make(map[int64]*mirrorPub, len(f.mirrors))
	for _, m := range f.mirrors {
		p := m.pub.Load()
		if p == nil {
			return nil, false
		}
		out[m.ws] = p
	}
	return out, true
}

// version is the Version l gives to what it serves of workspace ws (the
// feed's view pub, or the store's version stored when pub is nil):
// it changes whenever that does, also when the source changes, so that a
// cache keyed by it (the bot's) reloads exactly when it must.
func (l *LiveMirror) version(ws int64, pub *mirrorPub, stored int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := l.seen[ws]
	if last.version == 0 || last.pub != pub || (pub == nil && last.stored != stored) {
		last = liveServed{pub: pub, stored: stored, version: last.version + 1}
		l.seen[ws] = last
	}
	return last.version
}

// MirrorStates reads every workspace's mirror state.
func (l *LiveMirror) MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error) {
	if pubs, ok := l.memory(); ok {
		out := make(map[int64]store.MirrorState, len(pubs))
		for ws, p := range pubs {
			st := p.state
			st.Version = l.version(ws, p, 0)
			out[ws] = st
		}
		return out, nil
	}
	states, err := l.store.MirrorStates(ctx)
	if err != nil {
		return nil, err
	}
	for ws, st := range states {
		st.Version = l.version(ws, nil, st.Version)
		states[ws] = st
	}
	return states, nil
}

// MirrorLoad reads workspace ws's mirror, ordered by ticket id. The
// tickets may be shared with the feed: never change them.
func (l *LiveMirror) MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error) {
	if pubs, ok := l.memory(); ok {
		if p := pubs[ws]; p != nil {
			st := p.state
			st.Version = l.version(ws, p, 0)
			return p.tickets, st, nil
		}
	}
	tickets, st, err := l.store.MirrorLoad(ctx, ws)
	if err != nil {
		return nil, store.MirrorState{}, err
	}
	st.Version = l.version(ws, nil, st.Version)
	return tickets, st, nil
}

// Observe takes in a ticket as the desk answered a request deskbot made
// for a person (a command's or a button's update, a ticket it created or
// read): the next answer, the Home tab and the rules see it at once, and
// the feed saves it with its next write. It never waits on the
// store. Without a feed whose replica leads, or for a ticket of a workspace not
// mirrored, it does nothing: the leader's change feed brings the change.
func (l *LiveMirror) Observe(t *sdclient.Ticket) {
	f := l.feed.Load()
	if t == nil || t.ID <= 0 || f == nil || !f.leads() {
		return
	}
	if m := f.publishedMirrorFor(t); m != nil {
		m.takeIn(t)
	}
}

// publishedMirrorFor is the mirror t belongs in, chosen without taking any
// mirror's lock: the one of t's workspace, else the one whose view holds
// t, else the default workspace's when t is of the workspace its tickets
// are of; nil when there is none (a workspace deskbot does not poll: the
// rules must not see it) or it is not loaded.
func (f *Feed) publishedMirrorFor(t *sdclient.Ticket) *wsMirror {
	for _, m := range f.mirrors {
		if m.param != nil && t.WorkspaceID != nil && *m.param == *t.WorkspaceID {
			if m.pub.Load() == nil {
				return nil
			}
			return m
		}
	}
	for _, m := range f.mirrors {
		if p := m.pub.Load(); p != nil && p.holds(t.ID) {
			return m
		}
	}
	for _, m := range f.mirrors {
		if p := m.pub.Load(); p != nil && m.param == nil && p.home == workspaceOf(t) {
			return m
		}
	}
	return nil
}

// workspaceOf is t's workspace id, 0 when it names none.
func workspaceOf(t *sdclient.Ticket) int64 {
	if t.WorkspaceID == nil {
		return 0
	}
	return *t.WorkspaceID
}

// mirrorPub is one published view of a workspace's mirror. It is never
// changed once published; its tickets are the mirror's own (never changed
// in place either).
type mirrorPub struct {
	tickets []*sdclient.Ticket // ordered by id
	state   store.MirrorState
	// home is the workspace most of its tickets are of (0: none named);
	// for the default workspace's mirror, the default workspace's id.
	home int64
}

func (p *mirrorPub) find(id int64) (int, bool) {
	return slices.BinarySearchFunc(p.tickets, id, func(t *sdclient.Ticket, id int64) int {
		switch {
		case t.ID < id:
			return -1
		case t.ID > id:
			return 1
		}
		return 0
	})
}

func (p *mirrorPub) holds(id int64) bool {
	_, ok := p.find(id)
	return ok
}

// with is p with t taken in (or removed, when the desk deleted it or
// marked it as spam), or p itself when p holds a newer copy of t.
func (p *mirrorPub) with(t *sdclient.Ticket) *mirrorPub {
	i, ok := p.find(t.ID)
	if ok && p.tickets[i].UpdatedAt.After(t.UpdatedAt) {
		return p
	}
	out := &mirrorPub{state: p.state, home: p.home}
	switch {
	case t.Deleted || t.Spam:
		if !ok {
			return p
		}
		out.tickets = slices.Delete(slices.Clone(p.tickets), i, i+1)
	case ok:
		out.tickets = slices.Clone(p.tickets)
		out.tickets[i] = slim(t)
	default:
		out.tickets = slices.Insert(slices.Clone(p.tickets), i, slim(t))
	}
	return out
}

// without is p without ticket id.
func (p *mirrorPub) without(id int64) *mirrorPub {
	i, ok := p.find(id)
	if !ok {
		return p
	}
	return &mirrorPub{state: p.state, home: p.home, tickets: slices.Delete(slices.Clone(p.tickets), i, i+1)}
}

// takeIn publishes t at once and leaves it in the inbox for the
// feed, which puts it into the mirror the next time it holds mu
// (publish, snapshot). It does not take mu, which the feed holds
// while it writes the store.
func (m *wsMirror) takeIn(t *sdclient.Ticket) {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	p := m.pub.Load()
	if p == nil {
		return
	}
	if have := m.inbox[t.ID]; have != nil && have.UpdatedAt.After(t.UpdatedAt) {
		return
	}
	t = slim(t) // the mirror's own copy: the caller keeps t
	if m.inbox == nil {
		m.inbox = map[int64]*sdclient.Ticket{}
	}
	m.inbox[t.ID] = t
	m.pub.Store(p.with(t))
}

// absorbLocked puts the tickets people's requests brought (takeIn) into
// the mirror. Caller holds mu and pubMu.
func (m *wsMirror) absorbLocked() {
	for _, t := range m.inbox {
		m.putOwn(t)
	}
	clear(m.inbox)
}

// absorb is absorbLocked for a caller holding only mu.
func (m *wsMirror) absorb() {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	m.absorbLocked()
}

// publish makes what the mirror holds now (with the inbox taken in) the
// view readers get; a mirror not loaded, or that another replica wrote
// since, publishes none (readers then read the store). Caller holds mu.
func (m *wsMirror) publish() {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	if !m.loaded || m.stale {
		m.pub.Store(nil)
		return
	}
	m.absorbLocked()
	p := &mirrorPub{tickets: make([]*sdclient.Ticket, 0, len(m.tickets)), state: m.state, home: m.ws}
	seen := map[int64]int{}
	for _, t := range m.tickets {
		p.tickets = append(p.tickets, t)
		seen[workspaceOf(t)]++
	}
	slices.SortFunc(p.tickets, byID)
	if m.param == nil {
		for ws, n := range seen {
			if n > seen[p.home] || (n == seen[p.home] && ws < p.home) {
				p.home = ws
			}
		}
	}
	m.pub.Store(p)
}

// publishOne publishes the change the feed made (Observe) to one ticket (a
// re-read, a firing's update) at once, without sorting the whole mirror
// again. Caller holds mu.
func (m *wsMirror) publishOne(t *sdclient.Ticket) {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	if p := m.pub.Load(); p != nil && !m.stale {
		if have, ok := m.tickets[t.ID]; ok {
			m.pub.Store(p.with(have))
		}
	}
}

// publishGone publishes that ticket id left the mirror. Caller holds mu.
func (m *wsMirror) publishGone(id int64) {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	if p := m.pub.Load(); p != nil {
		m.pub.Store(p.without(id))
	}
}
