package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// DM is one direct message a rule's dm: action asks for, with the person
// already resolved to an e-mail (or a chat user id).
type DM struct {
	// To is the person's e-mail or chat user id; "" when there is nobody
	// to write to (Why says why), and the message goes to Channel.
	To string
	// Who names the person for the fallback message: "the assignee
	// Alice Smith", "the requester", or To itself.
	Who string
	// Why, when To is "", is why the message goes to Channel ("ticket #42
	// has no assignee").
	Why string
	// Channel is where the message goes when To is "" or has no chat
	// account: the dm:'s channel, its rule's alert channel or the desk
	// alias (resolved).
	Channel string
	Text    string // the rendered text
	Rule    string // the rule
	// Key names the firing and action as an Alert's Key does: the same for
	// a retry, so that the notifier can find a message it already sent.
	Key    string
	Ticket *sdclient.Ticket // the ticket as the firing saw it
}

// DMNotifier is optionally implemented by a Notifier that sends direct
// messages. Without it a dm: is posted as an alert to its fallback
// channel, saying for whom it was meant.
type DMNotifier interface {
	// DM sends d to d.To, or to d.Channel (saying why) when d.To is ""
	// or has no chat account. An error wrapping ErrNotDelivered says it
	// certainly was not sent.
	DM(ctx context.Context, d DM) error
	// AlreadyDMed reports whether a message with d.Key was sent, to the
	// person or to the fallback channel.
	AlreadyDMed(ctx context.Context, d DM) (bool, error)
}

// sendDM performs a dm: action on ticket t.
func (s *Scheduler) sendDM(ctx context.Context, cy *cycle, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) error {
	d, err := s.resolveDM(ctx, cy, r, t, a, marker)
	if err != nil {
		return err
	}
	if n, ok := s.notifier.(DMNotifier); ok {
		if err := n.DM(ctx, d); err != nil {
			return fmt.Errorf("dm %s: %w", d.Who, err)
		}
		return nil
	}
	why := d.Why
	if why == "" {
		why = "this chat cannot send direct messages"
	}
	err = s.notifier.Alert(ctx, Alert{Channel: d.Channel, Text: fmt.Sprintf("For %s (%s): %s", d.Who, why, d.Text), Rule: r.Name, Key: marker, Ticket: t})
	if err != nil {
		return fmt.Errorf("dm %s via %s: %w", d.Who, d.Channel, err)
	}
	return nil
}

// alreadyDMed reports whether the dm: carrying marker was already sent
// (a resumed firing).
func (s *Scheduler) alreadyDMed(ctx context.Context, cy *cycle, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) (bool, error) {
	d, err := s.resolveDM(ctx, cy, r, t, a, marker)
	if err != nil {
		return false, err
	}
	if n, ok := s.notifier.(DMNotifier); ok {
		return n.AlreadyDMed(ctx, d)
	}
	if ck, ok := s.notifier.(AlertChecker); ok {
		return ck.AlreadyAlerted(ctx, d.Channel, marker)
	}
	return false, nil
}

// resolveDM turns a dm: into a DM: the assignee or requester of t to
// their e-mail, from the scheduler's people cache or, when it does not
// know them (or knew them longer than peopleTTL ago), one desk request.
func (s *Scheduler) resolveDM(ctx context.Context, cy *cycle, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) (DM, error) {
	d := DM{To: a.To, Who: a.To, Channel: a.Channel, Text: a.Text, Rule: r.Name, Key: marker, Ticket: t}
	var k personKey
	switch a.To {
	case rules.DMAssignee:
		d.Who = "the assignee"
		if t.ResponderID == nil || *t.ResponderID == 0 {
			d.To, d.Why = "", fmt.Sprintf("ticket #%d has no assignee", t.ID)
			return d, nil
		}
		k = personKey{kindAgent, *t.ResponderID}
	case rules.DMRequester:
		d.Who = "the requester"
		k = personKey{kindRequester, t.RequesterID}
	default:
		return d, nil
	}
	p, found, err := s.person(ctx, cy, k)
	if err != nil {
		return d, fmt.Errorf("dm %s of ticket %d: %w", d.Who, t.ID, err)
	}
	if p.Name != "" {
		d.Who += " " + p.Name
	}
	switch {
	case !found:
		d.To, d.Why = "", fmt.Sprintf("the desk has no person %d", k.id)
	case p.Email == "":
		d.To, d.Why = "", "the desk has no e-mail for them"
	default:
		d.To = p.Email
	}
	return d, nil
}

// person returns the requester, agent or group k from the people cache
// when fresh, else reads it from the desk (and caches it). found is false
// when the desk has no such id.
func (s *Scheduler) person(ctx context.Context, cy *cycle, k personKey) (p rules.Person, found bool, err error) {
	s.people.mu.RLock()
	e, ok := s.people.entries[k]
	s.people.mu.RUnlock()
	if ok && cy.now.Sub(e.fetched) < peopleTTL {
		return e.p, e.found, nil
	}
	e = personEntry{fetched: cy.now, found: true}
	var resp *sdclient.Response
	switch k.kind {
	case kindRequester:
		var rq *sdclient.Requester
		if rq, resp, err = cy.desk.GetRequester(ctx, k.id); err == nil {
			e.p = rules.Person{Name: fullName(rq.FirstName, rq.LastName)}
			if rq.PrimaryEmail != nil {
				e.p.Email = *rq.PrimaryEmail
			}
			break
		}
		if !errors.Is(err, sdclient.ErrNotFound) {
			break
		}
		// An agent may raise a ticket: requester_id is then an agent's.
		s.count(cy, resp, err)
		fallthrough
	case kindAgent:
		var ag *sdclient.Agent
		if ag, resp, err = cy.desk.GetAgent(ctx, k.id); err == nil {
			e.p = rules.Person{Name: fullName(ag.FirstName, ag.LastName), Email: ag.Email}
		}
	default:
		return rules.Person{}, false, fmt.Errorf("person: unexpected kind %d", k.kind)
	}
	s.count(cy, resp, err)
	switch {
	case errors.Is(err, sdclient.ErrNotFound):
		e.found = false
	case err != nil:
		return rules.Person{}, false, err
	}
	s.people.put(k, e)
	return e.p, e.found, nil
}
