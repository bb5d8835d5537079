package firing

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

const (
	// PeopleTTL is how long a looked-up name is fresh; an older one is
	// still used while it is looked up again.
	PeopleTTL = 10 * time.Minute
	// PeopleRequestsPerCycle bounds the look-ups of one cycle: names not
	// known yet are "" to the rules until a later cycle fetches them.
	PeopleRequestsPerCycle = 5
)

type personKind uint8

const (
	kindRequester personKind = iota
	kindAgent
	kindGroup
)

type personKey struct {
	kind personKind
	id   int64
}

type personEntry struct {
	p       rules.Person // a group's name is in p.Name
	found   bool         // false: the desk has no such id
	fetched time.Time
}

// People is the rules' people look-ups (rules.People): names by id,
// fetched ahead of evaluation (Lookup) and read from memory while rules
// run. Its zero value is ready; it is safe for concurrent use.
type People struct {
	mu      sync.RWMutex
	entries map[personKey]personEntry
}

var _ rules.People = (*People)(nil)

func (c *People) get(k personKey) (rules.Person, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	return e.p, ok && e.found
}

// Requester implements rules.People.
func (c *People) Requester(id int64) (rules.Person, bool) {
	return c.get(personKey{kindRequester, id})
}

// Agent implements rules.People.
func (c *People) Agent(id int64) (rules.Person, bool) { return c.get(personKey{kindAgent, id}) }

// Group implements rules.People.
func (c *People) Group(id int64) (rules.GroupInfo, bool) {
	p, ok := c.get(personKey{kindGroup, id})
	return rules.GroupInfo{Name: p.Name}, ok
}

// stale returns the keys of tickets' people that are unknown, then those
// that are older than PeopleTTL at now, each once, at most max.
func (c *People) stale(tickets []*sdclient.Ticket, now time.Time, max int) []personKey {
	c.mu.RLock()
	defer c.mu.RUnlock()
	seen := map[personKey]bool{}
	var missing, old []personKey
	consider := func(k personKey) {
		if k.id <= 0 || seen[k] {
			return
		}
		seen[k] = true
		e, ok := c.entries[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case now.Sub(e.fetched) >= PeopleTTL:
			old = append(old, k)
		}
	}
	for _, t := range tickets {
		if len(missing) >= max {
			break
		}
		if t == nil {
			continue
		}
		// The group and the agent first: a desk has few of them, and so
		// they are known soon.
		if t.GroupID != nil {
			consider(personKey{kindGroup, *t.GroupID})
		}
		if t.ResponderID != nil {
			consider(personKey{kindAgent, *t.ResponderID})
		}
		consider(personKey{kindRequester, t.RequesterID})
	}
	return append(missing, old...)[:min(max, len(missing)+len(old))]
}

func (c *People) put(k personKey, e personEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[personKey]personEntry{}
	}
	c.entries[k] = e
}

// Lookup gives set these names of people and groups, when its rules read
// any, after fetching from desk up to PeopleRequestsPerCycle of those the
// tickets name that are unknown or stale at now, each request counted with
// count. Rules evaluated before a name is fetched see "".
func (c *People) Lookup(ctx context.Context, desk PeopleDesk, count func(*sdclient.Response, error), set *rules.Set, tickets []*sdclient.Ticket, now time.Time, log *slog.Logger) {
	if !set.NeedsPeople() {
		return
	}
	set.UsePeople(c)
	counted := countedPeople{desk: desk, count: count}
	for _, k := range c.stale(tickets, now, PeopleRequestsPerCycle) {
		if ctx.Err() != nil {
			return
		}
		e := personEntry{fetched: now, found: true}
		var err error
		if k.kind == kindGroup {
			var g *sdclient.Group
			if g, _, err = counted.GetGroup(ctx, k.id); err == nil {
				e.p = rules.Person{Name: g.Name}
			}
			if errors.Is(err, sdclient.ErrNotFound) {
				e.found, err = false, nil
			}
		} else {
			e.p, e.found, err = Person(ctx, counted, k.id, k.kind == kindAgent)
		}
		if err != nil {
			// The desk is in trouble: names wait for a later cycle.
			log.Debug("look up names for the rules", slog.Any("error", err))
			return
		}
		c.put(k, e)
	}
}

// Person reads a person from desk: agent id, or requester id (an agent's
// id when an agent raised the ticket: /requesters does not know it, and
// /agents is asked). found is false when the desk has no such id.
func Person(ctx context.Context, desk PeopleDesk, id int64, agent bool) (p rules.Person, found bool, err error) {
	if !agent {
		var rq *sdclient.Requester
		if rq, _, err = desk.GetRequester(ctx, id); err == nil {
			p = rules.Person{Name: rq.Name()}
			if rq.PrimaryEmail != nil {
				p.Email = *rq.PrimaryEmail
			}
			return p, true, nil
		}
	}
	if agent || errors.Is(err, sdclient.ErrNotFound) {
		var ag *sdclient.Agent
		if ag, _, err = desk.GetAgent(ctx, id); err == nil {
			return rules.Person{Name: ag.Name(), Email: ag.Email}, true, nil
		}
	}
	if errors.Is(err, sdclient.ErrNotFound) {
		return rules.Person{}, false, nil
	}
	return rules.Person{}, false, err
}
