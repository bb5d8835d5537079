package slackchat

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/sdclient"
)

// followText opens the direct-message thread that follows a ticket made
// with /ticket new or the new-ticket form.
const followText = "Ticket #%d: %s%s\nThis thread follows it: the desk's public replies and status changes appear here, and your replies here go to the ticket."

// followInDM links the ticket resp says someone opened with /ticket new
// (or the form) to a thread in their direct messages with the bot, when
// live threads are on, and returns resp saying so. The command's own
// answer is private, so it has no thread of its own; a DM thread keeps the
// ticket out of the channel and still follows it. Two calls
// (conversations.open, chat.postMessage), before the answer; a failure is
// logged and costs the ticket nothing.
func (s *Slack) followInDM(ctx context.Context, user string, resp chat.Reply) chat.Reply {
	if t := resp.Created; t != nil && s.threads.links != nil && user != "" && s.follow(ctx, user, t) {
		resp.Text += "\nIt is followed in a thread of your direct messages with deskbot."
	}
	return resp
}

// follow posts the head of the DM thread that follows t and links it.
func (s *Slack) follow(ctx context.Context, user string, t *sdclient.Ticket) bool {
	ch, _, _, err := s.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
	if err != nil {
		s.log.Warn("open a direct message to follow a new ticket; it is not followed", "ticket", t.ID, "err", err)
		return false
	}
	link := ""
	if l := s.router.TicketLink(t.ID); l != "" {
		link = " — " + l
	}
	text := fmt.Sprintf(followText, t.ID, t.Subject, link)
	_, ts, err := s.api.PostMessageContext(ctx, ch.ID, slack.MsgOptionText(escapeFit(text, maxMessageText), false))
	if err != nil {
		s.log.Warn("post the thread that follows a new ticket; it is not followed", "ticket", t.ID, "err", err)
		return false
	}
	linked, err := s.threads.links.LinkThread(ctx, t.ID, ch.ID, ts)
	if err != nil {
		s.log.Warn("link a new ticket to its DM thread; the thread does not follow it", "ticket", t.ID, "err", err)
	}
	return linked
}
