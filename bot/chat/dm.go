package chat

import (
	"context"
	"fmt"

	"github.com/deskbot/deskbot/sdclient"
)

// DMMessage is a rule's direct message to one person (a dm: action): the
// transport resolves To to a chat user and writes to them, or, when To is
// empty or has no chat account, posts to Channel saying for whom it was
// and why it is there.
type DMMessage struct {
	To      string // e-mail or chat user id; "" when there is nobody (Why says why)
	Who     string // the person in words: "the assignee Alice Smith"
	Why     string // when To is "": why the message goes to Channel
	Channel string // the fallback channel (id or #name)
	Text    string // the rule's rendered text
	Rule    string // rule name
	Key     string // unique per firing and action; AlreadyDMed looks for it
	Ticket  *sdclient.Ticket
}

// DMNotifier sends a rule's direct messages, and tells whether one was
// already sent (to the person or to the fallback channel) so that a
// firing resumed after a crash does not send twice. Slack and Console
// implement it.
type DMNotifier interface {
	DM(ctx context.Context, m DMMessage) error
	AlreadyDMed(ctx context.Context, m DMMessage) (bool, error)
}

// Check refuses a message without ticket, key or fallback channel.
func (m DMMessage) Check() error {
	return checkOnTicket("direct message", m.Ticket, [2]string{m.Key, "key"}, [2]string{m.Channel, "fallback channel"})
}

// FallbackText is what the fallback channel shows: for whom the message
// was, why it is here, and the message.
func (m DMMessage) FallbackText(why string) string {
	return fmt.Sprintf("For %s (not sent directly: %s): %s", m.Who, why, m.Text)
}
