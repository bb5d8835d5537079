package firing

import (
	"context"
	"errors"
	"log/slog"

	"github.com/deskbot/deskbot/sdclient"
)

// Source reads tickets for Rereads and keeps the mirror current with
// what they say.
type Source interface {
	// GetTicket reads ticket id from the desk.
	GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, error)
	// Observe puts a ticket read from the desk into the mirror.
	Observe(t *sdclient.Ticket)
	// Forget removes a ticket the desk no longer has from the mirror.
	Forget(id int64)
}

// Rereads are the tickets a cycle re-read from the desk, once per ticket:
// the execute step fills it before acting, and reconciling reads through
// it when it confirms an episode's end, so no ticket is read twice a
// cycle. Not safe for concurrent use.
type Rereads struct {
	fresh map[int64]*sdclient.Ticket // re-read tickets
	gone  map[int64]bool             // re-read said 404 (or deleted)
}

// NewRereads returns an empty Rereads.
func NewRereads() *Rereads {
	return &Rereads{fresh: map[int64]*sdclient.Ticket{}, gone: map[int64]bool{}}
}

// Has reports whether ticket id was re-read (or found gone) already.
func (r *Rereads) Has(id int64) bool {
	_, ok := r.fresh[id]
	return ok || r.gone[id]
}

// Fresh is ticket id as re-read in this cycle, if it was.
func (r *Rereads) Fresh(id int64) (*sdclient.Ticket, bool) {
	t, ok := r.fresh[id]
	return t, ok
}

// Put notes t as the cycle's freshest view of its ticket (the desk's
// answer to an update).
func (r *Rereads) Put(t *sdclient.Ticket) { r.fresh[t.ID] = t }

// Get returns the ticket as the desk has it now (read from src once per
// cycle), nil when it no longer exists; the mirror takes what it reads.
func (r *Rereads) Get(ctx context.Context, src Source, id int64) (*sdclient.Ticket, error) {
	if t, ok := r.fresh[id]; ok {
		return t, nil
	}
	if r.gone[id] {
		return nil, nil
	}
	t, err := src.GetTicket(ctx, id)
	if errors.Is(err, sdclient.ErrNotFound) || (err == nil && t != nil && t.Deleted) {
		r.gone[id] = true
		src.Forget(id)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.fresh[id] = t
	src.Observe(t) // the freshest view: the mirror takes it too
	return t, nil
}

// Mirror is what a DeskSource keeps current (*feed.Feed).
type Mirror interface {
	// Observe puts a ticket read from the desk into the mirror.
	Observe(t *sdclient.Ticket)
	// Forget removes a ticket the desk no longer has from the mirror.
	Forget(id int64)
	// NoticeStatus reports whether t shows an open status the mirror
	// does not know (the statuses are then re-read).
	NoticeStatus(t *sdclient.Ticket) bool
}

// DeskSource is the desk and the mirror as a cycle's re-reads see them
// (a Source): each read counted, an unknown open status noticed, the
// mirror kept current.
type DeskSource struct {
	Desk interface {
		GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error)
	}
	Count  func(*sdclient.Response, error)
	Mirror Mirror
	Log    *slog.Logger
}

var _ Source = DeskSource{}

// GetTicket reads ticket id from the desk.
func (r DeskSource) GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, error) {
	t, resp, err := r.Desk.GetTicket(ctx, id)
	r.Count(resp, err)
	if err == nil && t != nil && !t.Deleted && r.Mirror.NoticeStatus(t) {
		r.Log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", id), slog.Int("status", t.Status))
	}
	return t, err
}

// Observe puts t into the mirror.
func (r DeskSource) Observe(t *sdclient.Ticket) { r.Mirror.Observe(t) }

// Forget removes ticket id from the mirror.
func (r DeskSource) Forget(id int64) { r.Mirror.Forget(id) }
