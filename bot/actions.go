package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// ActionRequest is a button click, independent of the transport.
type ActionRequest struct {
	ActionID string // one of the Action* constants
	Value    string // the button's value: the ticket id
	AlertKey string // the alert's key when the card is an alert
	UserID   string
	TeamID   string
	Users    Directory
}

// ActionResult is what a click did. Ticket is the ticket after the action
// (nil when it failed); Activity is a line for the card ("Alice
// acknowledged"); Text is the answer to the clicking person alone.
type ActionResult struct {
	Ticket   *sdclient.Ticket
	Card     *Card // the refreshed ticket card (ticket cards only)
	Activity string
	Text     string
	Failed   bool
	Pages    []oncall.Page // on-call pages the click acknowledged
}

// Act performs a button click through the desk as the clicking agent.
func (r *Router) Act(ctx context.Context, a ActionRequest) (res ActionResult) {
	id, err := strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
	verbs := map[string]string{ActionAssignMe: "assign N", ActionAcknowledge: "acknowledge N", ActionResolve: "resolve N", ActionClose: "close N"}
	verb, known := verbs[a.ActionID]
	if err != nil || id <= 0 || !known {
		return ActionResult{Text: fmt.Sprintf("unknown button %q (value %q)", a.ActionID, a.Value), Failed: true}
	}
	req := Request{UserID: a.UserID, TeamID: a.TeamID, Users: a.Users}
	c := &call{req: req, cmd: &command{name: "button " + a.ActionID, verb: verb}, ticket: id}
	resp := r.run(ctx, c.cmd.name, func(ctx context.Context) (Response, error) {
		if err := r.authorise(ctx, c); err != nil {
			return Response{}, err
		}
		if err := r.permit(ctx, c); err != nil {
			return Response{}, err
		}
		name := c.agent.Name()
		var t *sdclient.Ticket
		var err error
		switch a.ActionID {
		case ActionAssignMe:
			t, err = r.update(ctx, id, sdclient.TicketUpdate{ResponderID: sdclient.Ptr(c.agent.ID)})
			res.Activity = fmt.Sprintf("%s assigned the ticket to themself", name)
		case ActionResolve:
			t, err = r.update(ctx, id, sdclient.TicketUpdate{Status: sdclient.Ptr(sdclient.StatusResolved)})
			res.Activity = fmt.Sprintf("%s resolved the ticket", name)
			if err == nil {
				r.resolvePages(ctx, id)
			}
		case ActionClose:
			t, err = r.update(ctx, id, sdclient.TicketUpdate{Status: sdclient.Ptr(sdclient.StatusClosed)})
			res.Activity = fmt.Sprintf("%s closed the ticket", name)
			if err == nil {
				r.resolvePages(ctx, id)
			}
		case ActionAcknowledge:
			if r.acks != nil && a.AlertKey != "" {
				if err := r.acks.Acknowledge(ctx, a.AlertKey, c.email, r.now()); err != nil {
					return Response{}, fmt.Errorf("record acknowledgement of %s: %w", a.AlertKey, err)
				}
			}
			// The alert of a rule that also pages: acknowledging it stops
			// the escalation too, and the page's note records who and when.
			p, paged := r.ackAlertPage(ctx, a.AlertKey, c.email)
			// The card is drawn from the ticket permit read (no second
			// read), with the note just written.
			cp := *c.t
			t = &cp
			if paged {
				res.Pages = append(res.Pages, p)
			} else {
				note := "Alert acknowledged in chat by " + name + "."
				if err := r.desk.AddNote(ctx, id, htmlText(note), c.agent.ID); err != nil {
					return Response{}, fmt.Errorf("add note to ticket %d: %w", id, err)
				}
				t.Conversations = append(slices.Clip(t.Conversations), &sdclient.Conversation{
					TicketID: id, UserID: c.agent.ID, Body: htmlText(note), BodyText: note,
					Private: true, Source: sdclient.ConversationSourceNote, CreatedAt: r.now(), UpdatedAt: r.now(),
				})
			}
			res.Activity = fmt.Sprintf("%s acknowledged", name)
		}
		if err != nil {
			return Response{}, err
		}
		t = withEmbeds(t, c.t)
		res.Ticket = t
		res.Card = r.ticketCard(ctx, t)
		return Response{Text: fmt.Sprintf("Done: %s (ticket #%d).", res.Activity, id)}, nil
	}, c)
	res.Text, res.Failed = resp.Text, resp.Failed
	if res.Failed {
		res.Ticket, res.Card, res.Activity = nil, nil, ""
	}
	return res
}

// withEmbeds gives t (the answer of an update, which embeds nothing) the
// conversations and requester of the same ticket as read before, so that
// the re-rendered card needs no second read.
func withEmbeds(t, before *sdclient.Ticket) *sdclient.Ticket {
	if t == nil || before == nil || t == before {
		return t
	}
	cp := *t
	if cp.Conversations == nil {
		cp.Conversations = before.Conversations
	}
	if cp.Requester == nil {
		cp.Requester = before.Requester
	}
	return &cp
}
