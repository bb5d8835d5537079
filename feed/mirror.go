package feed

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// MirrorStore keeps the ticket mirror durable (*store.Store implements it),
// so that it survives restarts and a new leader carries on where the old
// one stopped. Without one (WithMirrorStore not given) the mirror lives in
// memory only.
type MirrorStore interface {
	// MirrorLoad reads workspace ws's mirror, ordered by ticket id.
	MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error)
	// MirrorStates reads every workspace's mirror state.
	MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error)
	// MirrorApply stores put, deletes del and saves st for workspace ws,
	// returning the mirror's new version.
	MirrorApply(ctx context.Context, ws int64, put []*sdclient.Ticket, del []int64, st store.MirrorState) (int64, error)
}

// wsMirror is the mirror of one workspace: every open ticket, and the
// tickets that left the open statuses while deskbot followed the feed
// (kept for closedRetention), as the desk last showed them.
//
// Ticket values are never changed in place: an update replaces the
// pointer, so a snapshot taken under mu stays valid after mu is released.
type wsMirror struct {
	ws    int64  // 0: the account's default workspace
	param *int64 // workspace_id to send; nil for the default workspace

	mu      sync.Mutex // guards the fields below; held while persisting
	loaded  bool
	stale   bool // another replica wrote the stored mirror: reload it
	tickets map[int64]*sdclient.Ticket
	state   store.MirrorState
	// gone are tickets removed because the desk deleted them, marked them
	// as spam or answered 404: their episodes end without a re-read.
	gone map[int64]bool
	// pending are changes not yet persisted (a failed write is retried
	// with the next one).
	pendingPut map[int64]*sdclient.Ticket
	pendingDel map[int64]bool
	// observed are the changes deskbot itself brought in (Observe, the
	// inbox) since the last sync: the change feed will not show them as
	// changes, so the sync hands them to subscribers (Changes.Observed).
	observed []*sdclient.Ticket

	// pub is the mirror as people's commands read it (LiveMirror),
	// published whenever it changes (livemirror.go); readers take it
	// without mu. pubMu orders the publishers (pub, inbox); it is never
	// held across I/O.
	pub   atomic.Pointer[mirrorPub]
	pubMu sync.Mutex
	// inbox are tickets deskbot changed for people, published but not yet
	// put into tickets (LiveMirror.Observe); guarded by pubMu.
	inbox map[int64]*sdclient.Ticket

	full       *fullProgress // the full sync under way, nil when none
	fullFailed time.Time     // when the last full sync failed (retried later)
	nextFull   time.Time     // when the next periodic full sync is due
	nextTrash  time.Time     // when the next deleted/spam sweep is due
}

// fullProgress is how far a full sync has come.
type fullProgress struct {
	started time.Time
	seen    int
	total   int    // -1 until the first page
	how     string // "by the ticket list (why)" when not by the search
}

func newWSMirror(ws *int64) *wsMirror {
	m := &wsMirror{param: ws, tickets: map[int64]*sdclient.Ticket{}, gone: map[int64]bool{},
		pendingPut: map[int64]*sdclient.Ticket{}, pendingDel: map[int64]bool{}}
	if ws != nil {
		m.ws = *ws
	}
	return m
}

func (m *wsMirror) name() string { return wsName(m.param) }

// slim is the copy of t the mirror keeps: the fields rules and commands
// use, without the HTML description and embeds that can make a ticket
// large; of the description's text, what rules see of it
// (rules.MaxDescriptionText characters).
func slim(t *sdclient.Ticket) *sdclient.Ticket {
	c := *t
	c.Description, c.DescriptionText = "", rules.TrimDescription(t.DescriptionText)
	c.Conversations, c.Requester, c.Stats, c.Assets = nil, nil, nil, nil
	return &c
}

// newer reports whether t is newer than what the mirror holds of it (or
// unknown to it). An older copy (a lagging search index) never replaces
// a newer one; an identical one is a duplicate.
//
// updated_at has whole seconds: two changes within one second carry the
// same one, so a copy as new as the mirror's that differs from it is the
// later change, not a duplicate.
func (m *wsMirror) newer(t *sdclient.Ticket) bool {
	have, ok := m.tickets[t.ID]
	switch {
	case !ok || t.UpdatedAt.After(have.UpdatedAt):
		return true
	case t.UpdatedAt.Before(have.UpdatedAt):
		return false
	}
	return !reflect.DeepEqual(slim(t), have)
}

// put stores t when it is newer and reports whether it changed the mirror.
// Caller holds mu.
func (m *wsMirror) put(t *sdclient.Ticket) bool {
	if t == nil || t.ID <= 0 || !m.newer(t) {
		return false
	}
	if t.Deleted || t.Spam {
		return m.remove(t.ID)
	}
	s := slim(t)
	m.tickets[t.ID] = s
	m.pendingPut[t.ID] = s
	delete(m.pendingDel, t.ID)
	delete(m.gone, t.ID)
	return true
}

// putOwn is put for a ticket deskbot read or changed itself: a change is
// kept for the next sync's subscribers. Caller holds mu.
func (m *wsMirror) putOwn(t *sdclient.Ticket) {
	if m.put(t) {
		m.observed = append(m.observed, t)
	}
}

// remove drops ticket id (deleted, spam, gone) and remembers it as gone.
// Caller holds mu.
func (m *wsMirror) remove(id int64) bool {
	m.gone[id] = true
	if _, ok := m.tickets[id]; !ok {
		return false
	}
	delete(m.tickets, id)
	delete(m.pendingPut, id)
	m.pendingDel[id] = true
	return true
}

// persist writes the pending changes and the state in one transaction,
// having published them first: people see the mirror's changes without
// waiting for the write. Caller holds mu.
func (m *wsMirror) persist(ctx context.Context, ms MirrorStore) error {
	m.publish()
	put := make([]*sdclient.Ticket, 0, len(m.pendingPut))
	for _, t := range m.pendingPut {
		put = append(put, t)
	}
	del := make([]int64, 0, len(m.pendingDel))
	for id := range m.pendingDel {
		del = append(del, id)
	}
	v, err := ms.MirrorApply(ctx, m.ws, put, del, m.state)
	if err != nil {
		return fmt.Errorf("save the mirror of the %s: %w", m.name(), err)
	}
	if v != m.state.Version+1 {
		// Another replica wrote since our last write (it led for a while):
		// reload before the next sync; until then people read the store.
		m.stale = true
		m.publish()
	}
	m.state.Version = v
	clear(m.pendingPut)
	clear(m.pendingDel)
	return nil
}

// load replaces the in-memory mirror with the stored one. Caller holds mu.
func (m *wsMirror) load(ctx context.Context, ms MirrorStore) error {
	tickets, st, err := ms.MirrorLoad(ctx, m.ws)
	if err != nil {
		return fmt.Errorf("load the mirror of the %s: %w", m.name(), err)
	}
	m.tickets = make(map[int64]*sdclient.Ticket, len(tickets))
	for _, t := range tickets {
		m.tickets[t.ID] = t
	}
	m.state, m.loaded, m.stale = st, true, false
	clear(m.pendingPut)
	clear(m.pendingDel)
	m.publish()
	return nil
}

// snapshot returns the mirrored tickets ordered by id, with the tickets
// people's requests changed meanwhile (the rules see them too).
func (m *wsMirror) snapshot() []*sdclient.Ticket {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.absorb()
	out := make([]*sdclient.Ticket, 0, len(m.tickets))
	for _, t := range m.tickets {
		out = append(out, t)
	}
	slices.SortFunc(out, byID)
	return out
}

// memMirrorStore keeps the mirror in memory (no durable store given).
type memMirrorStore struct {
	mu      sync.Mutex
	tickets map[int64]map[int64]*sdclient.Ticket
	states  map[int64]store.MirrorState
}

// NewMemStore returns a MirrorStore in memory (no durable store given).
func NewMemStore() MirrorStore { return newMemMirrorStore() }

func newMemMirrorStore() *memMirrorStore {
	return &memMirrorStore{tickets: map[int64]map[int64]*sdclient.Ticket{}, states: map[int64]store.MirrorState{}}
}

func (s *memMirrorStore) MirrorLoad(_ context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*sdclient.Ticket
	for _, t := range s.tickets[ws] {
		out = append(out, t)
	}
	slices.SortFunc(out, byID)
	return out, s.states[ws], nil
}

func (s *memMirrorStore) MirrorStates(context.Context) (map[int64]store.MirrorState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int64]store.MirrorState, len(s.states))
	for ws, st := range s.states {
		out[ws] = st
	}
	return out, nil
}

func (s *memMirrorStore) MirrorApply(_ context.Context, ws int64, put []*sdclient.Ticket, del []int64, st store.MirrorState) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.tickets[ws]
	if ts == nil {
		ts = map[int64]*sdclient.Ticket{}
		s.tickets[ws] = ts
	}
	for _, t := range put {
		if t == nil {
			continue
		}
		if have, ok := ts[t.ID]; !ok || !t.UpdatedAt.Before(have.UpdatedAt) {
			ts[t.ID] = t
		}
	}
	for _, id := range del {
		delete(ts, id)
	}
	st.Version = s.states[ws].Version + 1
	s.states[ws] = st
	return st.Version, nil
}

func byID(a, b *sdclient.Ticket) int { return cmp.Compare(a.ID, b.ID) }
