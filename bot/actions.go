package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
)

// act performs a click on a ticket or alert card through the desk as the
// clicking agent; value is the button's value (ticket, and for an alert
// its rule and key).
func (r *Router) act(ctx context.Context, caller Caller, action, value string) (res Reply) {
	idv, rule, key := chat.SplitButtonValue(value)
	id, err := strconv.ParseInt(strings.TrimSpace(idv), 10, 64)
	verbs := map[string]string{chat.ActionAssignMe: "assign N", chat.ActionAcknowledge: "acknowledge N", chat.ActionResolve: "resolve N", chat.ActionClose: "close N"}
	verb, known := verbs[action]
	if err != nil || id <= 0 || !known {
		return failed(fmt.Sprintf("unknown button %q (value %q)", action, idv))
	}
	c := &call{caller: caller, cmd: &command{name: "button " + action, verb: verb}, ticket: id}
	resp := r.run(ctx, c.cmd.name, func(ctx context.Context) (Reply, error) {
		if err := r.authorise(ctx, c); err != nil {
			return Reply{}, err
		}
		if err := r.permit(ctx, c); err != nil {
			return Reply{}, err
		}
		name := c.agent.Name()
		var t *sdclient.Ticket
		var err error
		switch action {
		case chat.ActionAssignMe:
			t, err = r.update(ctx, id, sdclient.TicketUpdate{ResponderID: sdclient.Ptr(c.agent.ID)})
			res.Activity = fmt.Sprintf("%s assigned the ticket to themself", name)
		case chat.ActionResolve:
			t, err = r.update(ctx, id, sdclient.TicketUpdate{Status: sdclient.Ptr(sdclient.StatusResolved)})
			res.Activity = fmt.Sprintf("%s resolved the ticket", name)
			if err == nil {
				r.resolvePages(ctx, id)
			}
		case chat.ActionClose:
			t, err = r.update(ctx, id, sdclient.TicketUpdate{Status: sdclient.Ptr(sdclient.StatusClosed)})
			res.Activity = fmt.Sprintf("%s closed the ticket", name)
			if err == nil {
				r.resolvePages(ctx, id)
			}
		case chat.ActionAcknowledge:
			t, err = r.ackButton(ctx, c, rule, key, &res)
			res.Activity = fmt.Sprintf("%s acknowledged", name)
		}
		if err != nil {
			return Reply{}, err
		}
		t = withEmbeds(t, c.t)
		res.Ticket = t
		res.Card = r.ticketCard(ctx, t)
		if key != "" {
			res.Card.Buttons = AlertButtons(t, rule, key)
		}
		return Reply{Text: fmt.Sprintf("Done: %s (ticket #%d).", res.Activity, id)}, nil
	}, c)
	if resp.Failed {
		return resp
	}
	res.Text = resp.Text
	return res
}

// ackButton acknowledges the alert of ticket c.ticket (key: its alert,
// "" for a plain card): the alert's page stops, or a note records who
// acknowledged. The card is drawn from the ticket permit read (no second
// read), with the note just written.
func (r *Router) ackButton(ctx context.Context, c *call, rule, key string, res *Reply) (*sdclient.Ticket, error) {
	id := c.ticket
	if key != "" {
		if err := alertKeyPermit(id, rule, key); err != nil {
			return nil, err
		}
	}
	if r.acks != nil && key != "" {
		if err := r.acks.Acknowledge(ctx, key, c.email, r.now()); err != nil {
			return nil, fmt.Errorf("record acknowledgement of %s: %w", key, err)
		}
	}
	// The alert of a rule that also pages: acknowledging it stops
	// the escalation too, and the page's note records who and when.
	p, paged := r.ackAlertPage(ctx, id, key, c.email)
	cp := *c.t
	t := &cp
	if paged {
		res.Pages = append(res.Pages, p)
		return t, nil
	}
	note := "Alert acknowledged in chat by " + c.agent.Name() + "."
	if err := r.desk.AddNote(ctx, id, htmlText(note), c.agent.ID); err != nil {
		return nil, fmt.Errorf("add note to ticket %d: %w", id, err)
	}
	t.Conversations = append(slices.Clip(t.Conversations), &sdclient.Conversation{
		TicketID: id, UserID: c.agent.ID, Body: htmlText(note), BodyText: note,
		Private: true, Source: sdclient.ConversationSourceNote, CreatedAt: r.now(), UpdatedAt: r.now(),
	})
	return t, nil
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
