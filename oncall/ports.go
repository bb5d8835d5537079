package oncall

import (
	"context"
	"errors"
)

// ErrUnreachable marks a Pager error no retry can cure: the target has no
// account in the chat (an e-mail no chat user has). The escalator then
// pages the next level at once, instead of retrying the step for minutes,
// and the page's history says why.
var ErrUnreachable = errors.New("nobody to page in the chat")

// Pager delivers one escalation step to the chat: a direct message to a
// person (or a mention of a group) and the alert card in the on-call
// channel mentioning them, with Acknowledge, Take it and Escalate now
// buttons carrying PageRequest.Page.Key. The Slack side implements it. An
// error makes the Escalator retry the step (MaxAttempts in all) and then
// move on to the next level; an error wrapping ErrUnreachable moves on at
// once.
type Pager interface {
	Page(ctx context.Context, r PageRequest) error
}

// PageGrouper is optionally implemented by a Pager. When one Tick has more
// than the escalator's group_over steps (WithGroupOver) paging the same
// person, it hands them to PageGroup at once instead of one Page each: the
// chat draws each page's card as Page does, but sends the person ONE direct
// message naming every ticket. Each page keeps its own escalation; only the
// notification is grouped. The message must carry the (page key, step) of
// each member, so that a step retried after a crash or a lost answer
// (PageRequest.Retry) finds it and is not sent again, alone or grouped.
// PageGroup returns one error per request, in order (nil: delivered); an
// error is handled as Page's would be (retried, or the next level at once
// for ErrUnreachable).
type PageGrouper interface {
	PageGroup(ctx context.Context, rs []PageRequest) []error
}

// DefaultGroupOver is the escalator's group_over: more steps than this to
// one person in one tick are sent as one direct message (rules'
// DefaultGroupOver, the same default as grouped alerts).
const DefaultGroupOver = 5

// StopNotifier is optionally implemented by a Pager. The Escalator hands
// it a page that stopped without anyone clicking on its card: every level
// and round paged and nobody acknowledged, or the ticket resolved. The chat
// redraws the card (no buttons, and why it stopped), so that the people in
// the on-call channel see it. Errors are logged; nothing is retried.
type StopNotifier interface {
	PageStopped(ctx context.Context, p Page) error
}

// PageRequest is one escalation step to deliver.
type PageRequest struct {
	Page     Page   // the page after the step was claimed
	Target   Target // whom to page: a person (e-mail or Slack id) or a group
	Step     int    // 1 for the first step of the page
	Level    int    // 0-based index of the policy level
	Round    int    // 0-based pass through the policy
	Attempt  int    // 1 for the first try of this step
	Retry    bool   // the step was tried before (failed, or its claim ran out): it may have reached the person already
	TicketID int64
	Channel  string // the on-call channel for the alert card
	Text     string // the page's text (the rule's alert text)
}

// Desk is what the Escalator needs from the service desk.
type Desk interface {
	// AddNote adds a private note to a ticket: who acknowledged and when,
	// or that nobody did.
	AddNote(ctx context.Context, ticketID int64, body string) error
	// TicketClosed reports whether the ticket is resolved or closed, checked
	// before each escalation step so that a resolved ticket pages nobody.
	TicketClosed(ctx context.Context, ticketID int64) (bool, error)
	// PersonName is the name of the person an e-mail or chat id names (a
	// desk agent's name), "" when the desk knows none; the acknowledgement
	// note names them by it.
	PersonName(ctx context.Context, who string) string
}
