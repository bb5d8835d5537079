package firing

import (
	"context"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// DMSender sends a rule's dm: actions chat-side: it resolves the person
// (the ticket's assignee or requester to an e-mail) and sends the message
// (bot/follow implements it). The execution step declares it: it calls
// SendDM to perform a firing's dm:, and AlreadyDMed before sending again
// the dm: of a firing it resumes after a crash.
type DMSender interface {
	// SendDM sends d; an error wrapping ErrNotDelivered says it certainly
	// was not sent.
	SendDM(ctx context.Context, d DMRequest) error
	// AlreadyDMed reports whether d (its Key) was already sent, to the
	// person or to the fallback channel.
	AlreadyDMed(ctx context.Context, d DMRequest) (bool, error)
}

// DMRequest is one dm: action of a firing.
type DMRequest struct {
	// To is the dm:'s to: rules.DMAssignee, rules.DMRequester, an e-mail
	// or a chat user id.
	To      string
	Channel string // the fallback channel (alias resolved)
	Text    string // the rendered text
	Rule    string // the rule
	// Key names the firing and action as an Alert's Key does: the same for
	// a retry, so that the sender can find a message it already sent.
	Key    string
	Ticket *sdclient.Ticket // the ticket as the firing saw it
	Now    time.Time        // the cycle's time: how fresh a known person must be
	// People looks people up on the desk: the cycle's view of it, whose
	// requests count against the scheduler's budget and end with a stop.
	People PeopleDesk
}

// dmRequest is the dm: a of rule r on ticket t, for the DMSender.
func (ex *execution) dmRequest(r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) DMRequest {
	return DMRequest{To: a.To, Channel: a.Channel, Text: a.Text, Rule: r.Name, Key: marker, Ticket: t, Now: ex.Now,
		People: countedPeople{desk: ex.d.Desk, count: ex.d.Count}}
}

// sendDM performs a dm: action on ticket t: through Deps.DMs, else posted
// as an alert to its fallback channel, saying for whom it was.
func (ex *execution) sendDM(ctx context.Context, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) error {
	d := ex.dmRequest(r, t, a, marker)
	if ex.d.DMs != nil {
		return ex.d.DMs.SendDM(ctx, d)
	}
	who := dmWho(a.To)
	err := ex.d.Notifier.Alert(ctx, Alert{Channel: d.Channel, Text: fmt.Sprintf("For %s (this chat cannot send direct messages): %s", who, d.Text), Rule: r.Name, Key: marker, Ticket: t})
	if err != nil {
		return fmt.Errorf("dm %s via %s: %w", who, d.Channel, err)
	}
	return nil
}

// alreadyDMed reports whether the dm: carrying marker was already sent
// (a resumed firing).
func (ex *execution) alreadyDMed(ctx context.Context, r *rules.Rule, t *sdclient.Ticket, a rules.Action, marker string) (bool, error) {
	if ex.d.DMs != nil {
		return ex.d.DMs.AlreadyDMed(ctx, ex.dmRequest(r, t, a, marker))
	}
	if ck, ok := ex.d.Notifier.(AlertChecker); ok {
		return ck.AlreadyAlerted(ctx, a.Channel, marker)
	}
	return false, nil
}

// dmWho names the person of a dm:'s to: without looking them up.
func dmWho(to string) string {
	switch to {
	case rules.DMAssignee:
		return "the assignee"
	case rules.DMRequester:
		return "the requester"
	}
	return to
}

// countedPeople is the cycle's desk for people look-ups: each request
// counted (the cycle's requests, the budget).
type countedPeople struct {
	desk  PeopleDesk
	count func(*sdclient.Response, error)
}

func (m countedPeople) GetRequester(ctx context.Context, id int64) (*sdclient.Requester, *sdclient.Response, error) {
	rq, resp, err := m.desk.GetRequester(ctx, id)
	m.count(resp, err)
	return rq, resp, err
}

func (m countedPeople) GetAgent(ctx context.Context, id int64) (*sdclient.Agent, *sdclient.Response, error) {
	ag, resp, err := m.desk.GetAgent(ctx, id)
	m.count(resp, err)
	return ag, resp, err
}

func (m countedPeople) GetGroup(ctx context.Context, id int64) (*sdclient.Group, *sdclient.Response, error) {
	g, resp, err := m.desk.GetGroup(ctx, id)
	m.count(resp, err)
	return g, resp, err
}
