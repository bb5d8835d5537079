package follow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
)

// DMs sends the rules' direct messages for the scheduler's execution step
// (a firing.DMSender): the assignee or requester of the ticket resolved
// to their e-mail, from a cache or, when it does not know them (or knew
// them longer than peopleTTL ago), one desk request through the view the
// execution step lends; then sent through the chat.
type DMs struct {
	chat chat.DMNotifier

	mu     sync.Mutex
	people map[personKey]personEntry
}

var _ firing.DMSender = (*DMs)(nil)

// NewDMs sends direct messages through n.
func NewDMs(n chat.DMNotifier) *DMs {
	return &DMs{chat: n, people: map[personKey]personEntry{}}
}

// peopleTTL is how long a looked-up person is fresh.
const peopleTTL = 10 * time.Minute

type personKind uint8

const (
	kindRequester personKind = iota
	kindAgent
)

type personKey struct {
	kind personKind
	id   int64
}

type personEntry struct {
	p       rules.Person
	found   bool // false: the desk has no such id
	fetched time.Time
}

// SendDM sends the dm: d.
func (ds *DMs) SendDM(ctx context.Context, d firing.DMRequest) error {
	m, err := ds.resolve(ctx, d)
	if err != nil {
		return err
	}
	if err := ds.chat.DM(ctx, m); err != nil {
		return fmt.Errorf("dm %s: %w", m.Who, err)
	}
	return nil
}

// AlreadyDMed reports whether the dm: d was already sent (a resumed
// firing): to the person, or to the fallback channel.
func (ds *DMs) AlreadyDMed(ctx context.Context, d firing.DMRequest) (bool, error) {
	m, err := ds.resolve(ctx, d)
	if err != nil {
		return false, err
	}
	return ds.chat.AlreadyDMed(ctx, m)
}

// resolve turns a dm: into the chat's message: the assignee or requester
// of the ticket to their e-mail; another to: is taken as it is.
func (ds *DMs) resolve(ctx context.Context, d firing.DMRequest) (chat.DMMessage, error) {
	t := d.Ticket
	m := chat.DMMessage{To: d.To, Who: d.To, Channel: d.Channel, Text: d.Text, Rule: d.Rule, Key: d.Key, Ticket: t}
	var k personKey
	switch d.To {
	case rules.DMAssignee:
		m.Who = "the assignee"
		if t.ResponderID == nil || *t.ResponderID == 0 {
			m.To, m.Why = "", fmt.Sprintf("ticket #%d has no assignee", t.ID)
			return m, nil
		}
		k = personKey{kindAgent, *t.ResponderID}
	case rules.DMRequester:
		m.Who = "the requester"
		k = personKey{kindRequester, t.RequesterID}
	default:
		return m, nil
	}
	p, found, err := ds.person(ctx, d.People, k, d.Now)
	if err != nil {
		return m, fmt.Errorf("dm %s of ticket %d: %w", m.Who, t.ID, err)
	}
	if p.Name != "" {
		m.Who += " " + p.Name
	}
	switch {
	case !found:
		m.To, m.Why = "", fmt.Sprintf("the desk has no person %d", k.id)
	case p.Email == "":
		m.To, m.Why = "", "the desk has no e-mail for them"
	default:
		m.To = p.Email
	}
	return m, nil
}

// person returns the requester or agent k from the cache when fresh at
// now, else reads it from desk (and caches it). found is false when the
// desk has no such id.
func (ds *DMs) person(ctx context.Context, desk firing.PeopleDesk, k personKey, now time.Time) (rules.Person, bool, error) {
	ds.mu.Lock()
	e, ok := ds.people[k]
	ds.mu.Unlock()
	if ok && now.Sub(e.fetched) < peopleTTL {
		return e.p, e.found, nil
	}
	if desk == nil {
		return rules.Person{}, false, errors.New("person: no desk to look people up")
	}
	e = personEntry{fetched: now}
	var err error
	if e.p, e.found, err = firing.Person(ctx, desk, k.id, k.kind == kindAgent); err != nil {
		return rules.Person{}, false, err
	}
	ds.mu.Lock()
	ds.people[k] = e
	ds.mu.Unlock()
	return e.p, e.found, nil
}
