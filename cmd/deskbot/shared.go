package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/sdclient"
)

// Freshness of the shared desk reads: the form's fields are read once for
// the rules, the scheduler and the chat at start-up (and again by a reload
// or the scheduler's periodic refresh, which come later); the API key's
// agent does not change while deskbot runs, but is re-read now and then.
const (
	sharedFieldsFresh = 10 * time.Second
	sharedMeFresh     = 10 * time.Minute
)

// deskShared reads the desk resources that several parts need once and
// shares the answer: the ticket form's fields (custom fields and codes for
// the rules, open statuses for the scheduler, statuses for the chat) and
// the agent the API key acts as (the start-up check, the chat). Each part
// used to read them itself: three reads of /ticket_form_fields within the
// first milliseconds of a start. It reads through the interactive client
// (a start and a reload are people waiting), the scheduler through its
// own (getWith).
type deskShared struct {
	fields *shared[[]*sdclient.FormField]
	me     *shared[*sdclient.Agent]
}

func newDeskShared(c *sdclient.Client, now func() time.Time) *deskShared {
	return &deskShared{
		fields: newShared(sharedFieldsFresh, now, func(ctx context.Context) ([]*sdclient.FormField, error) {
			f, _, err := c.TicketFormFields.List(ctx, nil)
			return f, err
		}),
		me: newShared(sharedMeFresh, now, func(ctx context.Context) (*sdclient.Agent, error) {
			a, _, err := c.Agents.Me(ctx)
			return a, err
		}),
	}
}

// shared is one desk read that callers share: an answer younger than fresh
// is given again, and callers that ask while a read is under way wait for
// it (or their context) instead of sending their own. Failures are not
// kept.
type shared[T any] struct {
	read  func(context.Context) (T, error)
	fresh time.Duration
	now   func() time.Time
	turn  chan struct{} // a one-slot lock whose wait a context can end
	v     T
	at    time.Time
	ok    bool
	// last is v for readers that must not wait for a read under way (the
	// status pages): nil until a value was read or set.
	last atomic.Pointer[T]
}

func newShared[T any](fresh time.Duration, now func() time.Time, read func(context.Context) (T, error)) *shared[T] {
	return &shared[T]{read: read, fresh: fresh, now: now, turn: make(chan struct{}, 1)}
}

func (s *shared[T]) get(ctx context.Context) (T, error) { return s.getWith(ctx, s.read) }

// getWith is get reading with read when it must read: a caller with its
// own budget (the scheduler's background client) spends that, not the
// interactive reserve, and still shares the answer.
func (s *shared[T]) getWith(ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	var zero T
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	defer func() { <-s.turn }()
	if s.ok && s.now().Sub(s.at) < s.fresh {
		return s.v, nil
	}
	v, err := read(ctx)
	if err != nil {
		return zero, err
	}
	s.v, s.at, s.ok = v, s.now(), true
	s.last.Store(&v)
	return v, nil
}

// set records an answer read elsewhere (the start-up check's agent).
func (s *shared[T]) set(v T) {
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	s.v, s.at, s.ok = v, s.now(), true
	s.last.Store(&v)
}

// known is the value last read or set, however old, without reading or
// waiting; false when there is none.
func (s *shared[T]) known() (T, bool) {
	if p := s.last.Load(); p != nil {
		return *p, true
	}
	var zero T
	return zero, false
}

// sharedSchedulerDesk is the scheduler's desk with the open statuses read
// through deskShared, with the scheduler's own client when a read is due.
type sharedSchedulerDesk struct {
	firing.Desk
	c  *sdclient.Client
	sh *deskShared
}

func (d sharedSchedulerDesk) OpenStatuses(ctx context.Context) ([]int, error) {
	f, err := d.sh.fields.getWith(ctx, func(ctx context.Context) ([]*sdclient.FormField, error) {
		f, _, err := d.c.TicketFormFields.List(ctx, nil)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the desk's open statuses: %w", err)
	}
	return sdclient.OpenStatusesOf(f)
}

func (d sharedSchedulerDesk) Stopping(stop context.Context) firing.Desk {
	return sharedSchedulerDesk{d.Desk.Stopping(stop), d.c, d.sh}
}

// schedulerDesk is c as the scheduler's desk, sharing sh's reads when sh
// is not nil.
func schedulerDesk(c *sdclient.Client, sh *deskShared) firing.Desk {
	if sh == nil {
		return firing.ClientDesk(c)
	}
	return sharedSchedulerDesk{firing.ClientDesk(c), c, sh}
}

// sharedBotDesk is the chat's desk with the statuses and the API key's
// agent read through deskShared.
type sharedBotDesk struct {
	*bot.DeskAdapter
	sh *deskShared
}

func (d sharedBotDesk) Me(ctx context.Context) (*sdclient.Agent, error) { return d.sh.me.get(ctx) }

func (d sharedBotDesk) Statuses(ctx context.Context) ([]sdclient.FieldChoice, error) {
	f, err := d.sh.fields.get(ctx)
	if err != nil {
		return nil, err
	}
	return sdclient.StatusesOf(f)
}
