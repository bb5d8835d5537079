package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Live threads, thread -> desk: a reply in a Slack thread linked to a
// ticket (the link is in the store) becomes part of the ticket.
//
//   - From the ticket's requester (their chat e-mail is the requester's):
//     a public, incoming note on behalf of the requester
//     (POST /tickets/{id}/notes with incoming, user_id). The desk's reply
//     endpoint is not used: it answers *to* the requester, by e-mail.
//   - From a desk agent: a private note on behalf of the agent; a public
//     reply (e-mailed to the requester) when the message is marked so: it
//     starts with "reply:" or with the :speech_balloon: emoji. The agent
//     must be allowed to act on the ticket, as for /ticket note.
//   - From anyone else: not copied; the author is told why.
//
// What is written on the desk carries the installation's from-thread mark
// (store.Marks.FromThread, signed with the secret WithMarks gives), so the
// desk -> thread direction (scheduler/threads.go) does not post it back,
// and nothing anyone else writes passes for it.

// WithMarks sets what signs the conversations written from thread replies:
// the installation's (Store.Marks), the same as the scheduler's, which
// checks them. Default: store.NewMarks(nil), right only for tests.
func WithMarks(m *store.Marks) Option {
	return func(c *routerConfig) { c.marks = m }
}

// ThreadReplyMarks are the ways an agent marks a thread reply as a public
// reply to the requester rather than a private note.
var ThreadReplyMarks = []string{"reply:", ":speech_balloon:"}

// threadReplyText reports whether text is marked as a public reply, and
// returns it without the mark.
func threadReplyText(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, m := range ThreadReplyMarks {
		if len(t) >= len(m) && strings.EqualFold(t[:len(m)], m) {
			return strings.TrimSpace(t[len(m):]), true
		}
	}
	return t, false
}

// ThreadReply copies text, written by caller in the chat thread linked to
// ticketID, to the ticket, and returns what to tell the author: Failed
// answers are for the author alone (the message was not copied); others
// say what it became.
func (r *Router) ThreadReply(ctx context.Context, caller Caller, ticketID int64, text string) Reply {
	cmd := lookup(r.table, "ticket note")
	c := &call{caller: caller, cmd: cmd, ticket: ticketID}
	return r.run(ctx, "thread reply", func(ctx context.Context) (Reply, error) {
		body, public := threadReplyText(text)
		if body == "" {
			return Reply{}, refuse("an empty message is not copied to ticket #%d", ticketID)
		}
		email, err := r.callerEmail(ctx, caller)
		if err != nil {
			return Reply{}, err
		}
		c.email = email
		agent, err := r.agentByEmail(ctx, email)
		if err != nil {
			return Reply{}, err
		}
		if agent != nil {
			c.agent = agent
			return r.agentThreadReply(ctx, c, body, public)
		}
		return r.requesterThreadReply(ctx, c, email, strings.TrimSpace(text))
	}, c)
}

// agentThreadReply writes an agent's thread reply as a private note, or a
// public reply when marked so.
func (r *Router) agentThreadReply(ctx context.Context, c *call, body string, public bool) (Reply, error) {
	if err := r.permit(ctx, c); err != nil {
		return Reply{}, err
	}
	html := r.marks.FromThread(c.ticket, htmlText(body), body)
	if public {
		if err := r.desk.Reply(ctx, c.ticket, html, c.agent.ID); err != nil {
			return Reply{}, fmt.Errorf("reply on ticket %d: %w", c.ticket, err)
		}
		return Reply{Text: fmt.Sprintf("Copied to ticket #%d as a public reply (e-mailed to the requester).", c.ticket)}, nil
	}
	if err := r.desk.AddNote(ctx, c.ticket, html, c.agent.ID); err != nil {
		return Reply{}, fmt.Errorf("add note to ticket %d: %w", c.ticket, err)
	}
	return Reply{Text: fmt.Sprintf("Copied to ticket #%d as a private note (start with `reply:` to answer the requester).", c.ticket)}, nil
}

// requesterThreadReply writes the ticket's requester's thread reply as an
// incoming note; anyone else is refused.
func (r *Router) requesterThreadReply(ctx context.Context, c *call, email, body string) (Reply, error) {
	t, err := r.getTicket(ctx, c.ticket, true)
	if err != nil {
		return Reply{}, err
	}
	rq, err := r.desk.Requester(ctx, t.RequesterID)
	if errors.Is(err, errors.ErrUnsupported) {
		return Reply{}, refuse("this desk cannot tell who asked for ticket #%d; your message was not copied", c.ticket)
	}
	if err != nil && !isNotFound(err) {
		return Reply{}, fmt.Errorf("read requester of ticket %d: %w", c.ticket, err)
	}
	if rq == nil || !strings.EqualFold(strings.TrimSpace(rq.Email), strings.TrimSpace(email)) {
		return Reply{}, refuse("only the requester of ticket #%d and desk agents can add to it from this thread; your message was not copied", c.ticket)
	}
	html := r.marks.FromThread(c.ticket, htmlText(body), body)
	err = r.desk.RequesterNote(ctx, c.ticket, html, rq.ID)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return Reply{}, fmt.Errorf("add requester note to ticket %d: %w", c.ticket, err)
	}
	if err == nil {
		return Reply{Text: fmt.Sprintf("Copied to ticket #%d.", c.ticket)}, nil
	}
	text := rq.Name + " (" + email + ") wrote in Slack:\n" + body
	if err := r.desk.AddNote(ctx, c.ticket, r.marks.FromThread(c.ticket, htmlText(text), text), 0); err != nil {
		return Reply{}, fmt.Errorf("add note to ticket %d: %w", c.ticket, err)
	}
	return Reply{Text: fmt.Sprintf("Copied to ticket #%d.", c.ticket)}, nil
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, sdclient.ErrNotFound) }
