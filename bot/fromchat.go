package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
)

// MessageLedger remembers which ticket each chat message became, so that a
// second reaction or shortcut on the same message never makes a second
// ticket, on any replica. The store package implements it durably
// (migration 0006); without one the router keeps it in memory.
type MessageLedger interface {
	// ClaimMessage claims (channel, ts) for a new ticket: won, or the
	// ticket made already (ticketID > 0), or neither (another claim is
	// live).
	ClaimMessage(ctx context.Context, channel, ts string, now time.Time, lease time.Duration) (ticketID int64, won bool, err error)
	// SetMessageTicket records the ticket made under the claim.
	SetMessageTicket(ctx context.Context, channel, ts string, ticketID int64) error
	// ReleaseMessage gives up a claim that made no ticket.
	ReleaseMessage(ctx context.Context, channel, ts string) error
	// MessageTicket is the ticket made from (channel, ts), if any.
	MessageTicket(ctx context.Context, channel, ts string) (ticketID int64, ok bool, err error)
}

// WithMessageLedger sets where message -> ticket links are kept; share one
// between replicas (the store). Default: in memory.
func WithMessageLedger(l MessageLedger) Option {
	return func(c *routerConfig) { c.messages = l }
}

// Limits of a ticket made from a message: how many thread replies its
// description quotes, and how long that description may grow.
const (
	maxThreadReplies = 100
	maxFromChatText  = 60000
)

// TicketFromMessage makes a ticket of a chat message (the "Create ticket"
// shortcut, or a ticket reaction): subject from the form or the message's
// first line, description with the message, its thread replies so far and
// its permalink; requester the author (by their chat e-mail), or the
// caller when the author has none. Anyone the desk knows by e-mail may
// open tickets, so the caller needs only an e-mail. A message makes one
// ticket: a second request answers with the first ticket and costs no
// desk request. A Reply with Public set is the answer for the message's
// thread; any other is for the caller alone.
func (r *Router) TicketFromMessage(ctx context.Context, caller Caller, m chat.SourceMessage) Reply {
	cmd := lookup(r.table, "ticket new")
	c := &call{caller: caller, cmd: cmd}
	return r.run(ctx, "ticket new", func(ctx context.Context) (Reply, error) {
		if m.Channel == "" || m.TS == "" || m.Load == nil {
			return Reply{}, refuse("that is not a message a ticket can be made from")
		}
		email, err := r.callerEmail(ctx, caller)
		if err != nil {
			return Reply{}, err
		}
		lease := max(2*r.timeout, time.Minute)
		id, won, err := r.messages.ClaimMessage(ctx, m.Channel, m.TS, r.now(), lease)
		switch {
		case err != nil:
			return Reply{}, fmt.Errorf("claim message: %w", err)
		case !won && id > 0:
			return Reply{Text: r.withLink(fmt.Sprintf("This message is already ticket #%d", id), id) + "."}, nil
		case !won:
			return Reply{Text: "A ticket is being made from this message right now; its link will appear in the thread."}, nil
		}
		t, fallback, err := r.createFromMessage(ctx, caller, email, m)
		if err != nil {
			if rerr := r.messages.ReleaseMessage(context.WithoutCancel(ctx), m.Channel, m.TS); rerr != nil {
				r.log.Error("release a message claim", "channel", m.Channel, "ts", m.TS, "err", rerr)
			}
			return Reply{}, err
		}
		if err := r.messages.SetMessageTicket(context.WithoutCancel(ctx), m.Channel, m.TS, t.ID); err != nil {
			// The ticket exists: say so. Only after the claim's lease
			// could another request make a second one.
			r.log.Error("record the ticket of a message", "channel", m.Channel, "ts", m.TS, "ticket", t.ID, "err", err)
		}
		text := r.withLink(fmt.Sprintf("Created ticket #%d from this message: %s", t.ID, t.Subject), t.ID)
		if fallback {
			text += "\nThe message's author has no e-mail address in their chat profile, so the requester is the person who asked for the ticket."
		}
		return Reply{Text: text, Public: true, Ticket: t}, nil
	}, c)
}

// MessageTicket answers, for the caller alone, that a ticket was made from
// the message already; ok is false when none was (or the ledger cannot
// say), and the shortcut's form opens. It reads the store only.
func (r *Router) MessageTicket(ctx context.Context, channel, ts string) (Reply, bool) {
	id, ok, err := r.messages.MessageTicket(ctx, channel, ts)
	if err != nil {
		r.log.Warn("read the ticket of a message", "channel", channel, "ts", ts, "err", err)
		return Reply{}, false
	}
	if !ok {
		return Reply{}, false
	}
	return Reply{Text: r.withLink(fmt.Sprintf("This message is already ticket #%d", id), id) + "."}, true
}

// withLink appends the ticket's link, when there is one, to text.
func (r *Router) withLink(text string, id int64) string {
	if l := r.TicketLink(id); l != "" {
		return text + " — " + l
	}
	return text
}

// createFromMessage reads the message and opens its ticket; fallback says
// that the requester is the caller because the author has no e-mail.
func (r *Router) createFromMessage(ctx context.Context, caller Caller, callerEmail string, m chat.SourceMessage) (*sdclient.Ticket, bool, error) {
	content, err := m.Load(ctx)
	if err != nil {
		r.log.Warn("read a message for its ticket", "channel", m.Channel, "ts", m.TS, "err", err)
		return nil, false, refuse("could not read that message (%v); the bot reads only channels it is a member of: invite it there and try again", err)
	}
	author := content.Author
	requester, fallback := r.chatEmail(ctx, caller, author), false
	if requester == "" {
		requester, fallback = callerEmail, true
	}
	var v chat.TicketFormValues
	if m.Form != nil {
		v = *m.Form
	}
	subject := strings.Join(strings.Fields(v.Subject), " ")
	if subject == "" {
		subject = firstLine(content.Text)
	}
	if subject == "" {
		subject = "Message from chat"
	}
	desc := r.messageDescription(ctx, caller, v.Description, content)
	prio := cmp.Or(v.Priority, sdclient.PriorityLow)
	// Creating is not idempotent: never retried (the claim stays ours).
	t, err := r.desk.CreateTicket(ctx, &sdclient.TicketCreate{
		Subject:     chat.Truncate(subject, maxSubject),
		Description: htmlText(desc),
		Email:       requester,
		Priority:    prio,
		Status:      sdclient.StatusOpen,
		Source:      sdclient.SourceTeamChat,
		GroupID:     v.GroupID,
	})
	if err != nil {
		return nil, false, fmt.Errorf("create ticket: %w", err)
	}
	return t, fallback, nil
}

// chatEmail is a chat user's e-mail, "" when they have none or it cannot
// be read (logged).
func (r *Router) chatEmail(ctx context.Context, caller Caller, userID string) string {
	if userID == "" || caller.Users == nil {
		return ""
	}
	email, err := caller.Users.Email(ctx, userID)
	if err != nil {
		r.log.Warn("look up the e-mail of a message's author", "user", userID, "err", err)
		return ""
	}
	return email
}

// firstLine is the first line of text with words, spaces folded.
func firstLine(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if s := strings.Join(strings.Fields(line), " "); s != "" {
			return s
		}
	}
	return ""
}

// messageDescription is the ticket's description: the words typed in the
// form, the message, its link, and the thread's replies so far, each reply
// signed with its author's e-mail (or chat id), cut at maxFromChatText.
func (r *Router) messageDescription(ctx context.Context, caller Caller, extra string, mc chat.MessageContent) string {
	var b strings.Builder
	if s := strings.TrimSpace(extra); s != "" {
		b.WriteString(s + "\n\n")
	}
	b.WriteString(strings.TrimSpace(mc.Text))
	if mc.Permalink != "" {
		b.WriteString("\n\nFrom chat: " + mc.Permalink)
	}
	if len(mc.Replies) > 0 {
		b.WriteString("\n\nThread replies so far:")
	}
	names := map[string]string{}
	for i, rp := range mc.Replies {
		if i == maxThreadReplies {
			mc.More = true
			break
		}
		who, ok := names[rp.Author]
		if !ok {
			who = cmp.Or(r.chatEmail(ctx, caller, rp.Author), rp.Author, "bot")
			names[rp.Author] = who
		}
		fmt.Fprintf(&b, "\n%s: %s", who, strings.TrimSpace(rp.Text))
	}
	if mc.More {
		b.WriteString("\n(more replies in the thread)")
	}
	s := b.String()
	if utf8.RuneCountInString(s) > maxFromChatText {
		s = chat.Truncate(s, maxFromChatText)
	}
	return s
}

// memoryMessages is the in-process MessageLedger of a router without a
// store (one replica, forgotten at exit).
type memoryMessages struct {
	mu sync.Mutex
	m  map[[2]string]memoryClaim
}

type memoryClaim struct {
	ticket int64
	until  time.Time
}

func (l *memoryMessages) ClaimMessage(_ context.Context, channel, ts string, now time.Time, lease time.Duration) (int64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[[2]string]memoryClaim{}
	}
	k := [2]string{channel, ts}
	c, ok := l.m[k]
	switch {
	case ok && c.ticket > 0:
		return c.ticket, false, nil
	case ok && now.Before(c.until):
		return 0, false, nil
	}
	l.m[k] = memoryClaim{until: now.Add(lease)}
	return 0, true, nil
}

func (l *memoryMessages) SetMessageTicket(_ context.Context, channel, ts string, id int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{channel, ts}
	if c, ok := l.m[k]; !ok || (c.ticket != 0 && c.ticket != id) {
		return errors.New("the message is not claimed, or has another ticket")
	}
	l.m[k] = memoryClaim{ticket: id}
	return nil
}

func (l *memoryMessages) MessageTicket(_ context.Context, channel, ts string) (int64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.m[[2]string{channel, ts}]
	return c.ticket, c.ticket > 0, nil
}

func (l *memoryMessages) ReleaseMessage(_ context.Context, channel, ts string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.m[[2]string{channel, ts}]; c.ticket == 0 {
		delete(l.m, [2]string{channel, ts})
	}
	return nil
}
