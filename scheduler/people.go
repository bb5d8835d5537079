package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// PeopleDesk is the part of the desk that names the people and groups of
// a ticket for rules (ticket.requester, ticket.agent, ticket.group); part
// of Desk.
type PeopleDesk interface {
	// GetRequester reads requester id.
	GetRequester(ctx context.Context, id int64) (*sdclient.Requester, *sdclient.Response, error)
	// GetAgent reads agent id.
	GetAgent(ctx context.Context, id int64) (*sdclient.Agent, *sdclient.Response, error)
	// GetGroup reads group id.
	GetGroup(ctx context.Context, id int64) (*sdclient.Group, *sdclient.Response, error)
}

func (d clientDesk) GetRequester(ctx context.Context, id int64) (*sdclient.Requester, *sdclient.Response, error) {
	return d.c.Requesters.Get(ctx, id)
}

func (d clientDesk) GetAgent(ctx context.Context, id int64) (*sdclient.Agent, *sdclient.Response, error) {
	return d.c.Agents.Get(ctx, id)
}

func (d clientDesk) GetGroup(ctx context.Context, id int64) (*sdclient.Group, *sdclient.Response, error) {
	return d.c.Groups.Get(ctx, id)
}

const (
	// peopleTTL is how long a looked-up name is fresh; an older one is
	// still used while it is looked up again.
	peopleTTL = 10 * time.Minute
	// peopleRequestsPerCycle bounds the look-ups of one cycle: names not
	// known yet are "" to the rules until a later cycle fetches them.
	peopleRequestsPerCycle = 5
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

// peopleCache is the scheduler's rules.People: names by id, fetched ahead
// of evaluation (fetch) and read from memory while rules run. Its zero
// value is ready.
type peopleCache struct {
	mu      sync.RWMutex
	entries map[personKey]personEntry
}

var _ rules.People = (*peopleCache)(nil)

func (c *peopleCache) get(k personKey) (rules.Person, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	return e.p, ok && e.found
}

// Requester implements rules.People.
func (c *peopleCache) Requester(id int64) (rules.Person, bool) {
	return c.get(personKey{kindRequester, id})
}

// Agent implements rules.People.
func (c *peopleCache) Agent(id int64) (rules.Person, bool) { return c.get(personKey{kindAgent, id}) }

// Group implements rules.People.
func (c *peopleCache) Group(id int64) (rules.GroupInfo, bool) {
	p, ok := c.get(personKey{kindGroup, id})
	return rules.GroupInfo{Name: p.Name}, ok
}

// stale returns the keys of tickets' people that are unknown, then those
// that are older than peopleTTL at now, each once, at most max.
func (c *peopleCache) stale(tickets []*sdclient.Ticket, now time.Time, max int) []personKey {
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
		case now.Sub(e.fetched) >= peopleTTL:
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

func (c *peopleCache) put(k personKey, e personEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[personKey]personEntry{}
	}
	c.entries[k] = e
}

// fullName joins a first and a last name.
func fullName(first string, last *string) string {
	if last == nil {
		return strings.TrimSpace(first)
	}
	return strings.TrimSpace(first + " " + *last)
}

// lookupPeople gives set the scheduler's names of people and groups, when
// its rules read any, after fetching up to peopleRequestsPerCycle of those
// the tickets name that are unknown or stale. Rules evaluated before a
// name is fetched see "".
func (s *Scheduler) lookupPeople(ctx context.Context, cy *cycle, set *rules.Set, tickets []*sdclient.Ticket) {
	if !set.NeedsPeople() {
		return
	}
	set.UsePeople(&s.people)
	pd := s.desk
	for _, k := range s.people.stale(tickets, cy.now, peopleRequestsPerCycle) {
		if ctx.Err() != nil {
			return
		}
		e := personEntry{fetched: cy.now, found: true}
		var resp *sdclient.Response
		var err error
		switch k.kind {
		case kindRequester:
			var r *sdclient.Requester
			if r, resp, err = pd.GetRequester(ctx, k.id); err == nil {
				e.p = rules.Person{Name: fullName(r.FirstName, r.LastName)}
				if r.PrimaryEmail != nil {
					e.p.Email = *r.PrimaryEmail
				}
			} else if errors.Is(err, sdclient.ErrNotFound) {
				// An agent may raise a ticket: requester_id is then an
				// agent's id, which /requesters does not know.
				s.count(cy, resp, err)
				var a *sdclient.Agent
				if a, resp, err = pd.GetAgent(ctx, k.id); err == nil {
					e.p = rules.Person{Name: fullName(a.FirstName, a.LastName), Email: a.Email}
				}
			}
		case kindAgent:
			var a *sdclient.Agent
			if a, resp, err = pd.GetAgent(ctx, k.id); err == nil {
				e.p = rules.Person{Name: fullName(a.FirstName, a.LastName), Email: a.Email}
			}
		case kindGroup:
			var g *sdclient.Group
			if g, resp, err = pd.GetGroup(ctx, k.id); err == nil {
				e.p = rules.Person{Name: g.Name}
			}
		}
		s.count(cy, resp, err)
		switch {
		case errors.Is(err, sdclient.ErrNotFound):
			e.found = false
		case err != nil:
			// The desk is in trouble: names wait for a later cycle.
			cy.log.Debug("look up names for the rules", slog.Any("error", err))
			return
		}
		s.people.put(k, e)
	}
}
