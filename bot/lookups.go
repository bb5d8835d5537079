package bot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// cached is a value read at a time; ok: read at all.
type cached[T any] struct {
	v  T
	at time.Time
	ok bool
}

// fresh reads c under the router's lock and reports whether it was read
// less than ttl before now.
func fresh[T any](r *Router, c *cached[T], now time.Time, ttl time.Duration) (cached[T], bool) {
	r.mu.Lock()
	v := *c
	r.mu.Unlock()
	return v, v.ok && now.Sub(v.at) < ttl
}

// freshIn is fresh for the entry k of the cache m.
func freshIn[K comparable, T any](r *Router, m map[K]cached[T], k K, now time.Time, ttl time.Duration) (cached[T], bool) {
	r.mu.Lock()
	v := m[k]
	r.mu.Unlock()
	return v, v.ok && now.Sub(v.at) < ttl
}

// keepIn is keep for the entry k of the cache m.
func keepIn[K comparable, T any](r *Router, m map[K]cached[T], k K, v T, now time.Time) {
	r.mu.Lock()
	m[k] = cached[T]{v: v, at: now, ok: true}
	r.mu.Unlock()
}

// keep stores v, read at now, in c under the router's lock.
func keep[T any](r *Router, c *cached[T], v T, now time.Time) {
	r.mu.Lock()
	*c = cached[T]{v: v, at: now, ok: true}
	r.mu.Unlock()
}

// statusChoices returns the account's statuses, cached for ten minutes;
// on error the fixed four.
func (r *Router) statusChoices(ctx context.Context) []sdclient.FieldChoice {
	now := r.now()
	s, ok := fresh(r, &r.statuses, now, 10*time.Minute)
	if ok {
		return s.v
	}
	// One request for a burst of commands on a cold cache, not one each.
	v, err := r.statusLookups.Do("", func() ([]sdclient.FieldChoice, error) {
		return retried(ctx, r, r.desk.Statuses)
	})
	if err != nil || len(v) == 0 {
		r.log.Warn("read statuses", "err", err)
		if s.ok {
			return s.v
		}
		return defaultStatuses()
	}
	keep(r, &r.statuses, v, now)
	return v
}

func defaultStatuses() []sdclient.FieldChoice {
	return []sdclient.FieldChoice{
		{ID: sdclient.StatusOpen, Value: "Open"},
		{ID: sdclient.StatusPending, Value: "Pending"},
		{ID: sdclient.StatusResolved, Value: "Resolved"},
		{ID: sdclient.StatusClosed, Value: "Closed"},
	}
}

// cachedGroups returns the groups, cached for ten minutes; wait bounds how
// long a cold cache may take (the new-ticket form must open within Slack's
// 3 s trigger window).
func (r *Router) cachedGroups(ctx context.Context, wait time.Duration) []*sdclient.Group {
	now := r.now()
	g, ok := fresh(r, &r.groups, now, 10*time.Minute)
	if ok {
		return g.v
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	v, err := r.desk.Groups(ctx)
	if err != nil {
		r.log.Warn("read groups", "err", err)
		return g.v
	}
	sort.Slice(v, func(i, j int) bool { return v[i].Name < v[j].Name })
	keep(r, &r.groups, v, now)
	return v
}

// agentName is an agent's display name, cached; "agent #N" when unknown.
func (r *Router) agentName(ctx context.Context, id int64) string {
	now := r.now()
	if n, ok := freshIn(r, r.names, id, now, r.agentTTL); ok {
		return n.v
	}
	a, err := retried(ctx, r, func(ctx context.Context) (*sdclient.Agent, error) { return r.desk.Agent(ctx, id) })
	if err != nil {
		// The desk is down or slow: a name deskbot knew, however old, is
		// better than an id.
		if name := r.knownAgentName(id); name != "" {
			return name
		}
		return fmt.Sprintf("agent #%d", id)
	}
	keepIn(r, r.names, id, a.Name(), now)
	return a.Name()
}

// requester is the person with this id for a ticket card, cached like
// agent names; nil when the desk cannot say (the card shows the id).
func (r *Router) requester(ctx context.Context, id int64) *sdclient.TicketRequester {
	now := r.now()
	if n, ok := freshIn(r, r.requesters, id, now, r.agentTTL); ok {
		return n.v
	}
	rq, err := retried(ctx, r, func(ctx context.Context) (*sdclient.TicketRequester, error) { return r.desk.Requester(ctx, id) })
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil
	case errors.Is(err, sdclient.ErrNotFound):
		rq = nil // remembered: not asked again for a while
	case err != nil:
		r.log.Warn("look up requester", "requester", id, "err", err)
		return nil
	}
	keepIn(r, r.requesters, id, rq, now)
	return rq
}
