package slackchat

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/oncall"
)

var _ chat.DMNotifier = (*Slack)(nil)

// blockDMPrefix starts the block id that marks a rule's direct message
// (or its fallback post) with its key, so that a firing resumed after a
// crash finds the message the dead process sent.
const blockDMPrefix = "deskbot_dm:"

// maxCachedUsers bounds the users.lookupByEmail cache: past it, entries
// older than their TTL go first, then the oldest.
const maxCachedUsers = 10000

// DM implements chat.DMNotifier: m.To (an e-mail, resolved with
// users.lookupByEmail, cached for an hour and a miss for five minutes, or a
// user id) gets a direct message (conversations.open, chat.postMessage:
// two calls, one more on a cache miss). When m.To is empty or no Slack
// user has the e-mail, the message goes to m.Channel and says why.
func (s *Slack) DM(ctx context.Context, m chat.DMMessage) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("direct message: %w", err)
	}
	userID, why, err := s.dmTarget(ctx, m)
	if err != nil {
		return err
	}
	marker := markerID(blockDMPrefix, m.Key)
	if userID != "" {
		ch, _, _, err := s.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{userID}})
		if code, ok := unreachableDM(err); ok {
			why = fmt.Sprintf("Slack would not open a direct message with %s (%s)", m.To, code)
		} else if err != nil {
			return fmt.Errorf("direct message %s: conversations.open %s: %w", m.Key, userID, err)
		} else {
			_, _, err = s.api.PostMessageContext(ctx, ch.ID,
				slack.MsgOptionText(escapeFit(m.Text, maxMessageText), false),
				slack.MsgOptionBlocks(s.dmBlocks(m, escape(m.Text), marker)...))
			if err != nil {
				return fmt.Errorf("direct message %s to %s: %w", m.Key, userID, err)
			}
			return nil
		}
	}
	text := m.FallbackText(why)
	ch, _, err := s.api.PostMessageContext(ctx, m.Channel,
		slack.MsgOptionText(escapeFit(text, maxMessageText), false),
		slack.MsgOptionBlocks(s.dmBlocks(m, escape(text), marker)...))
	if err != nil {
		return fmt.Errorf("direct message %s, instead to %s: %w", m.Key, m.Channel, err)
	}
	if ch != "" && ch != m.Channel {
		s.rememberChannel(m.Channel, ch)
	}
	return nil
}

// AlreadyDMed implements chat.DMNotifier: whether the person's DM with the
// bot (its latest messages) or the fallback channel (its recent history)
// holds a message marked with m.Key. Both are searched, since whether the
// person has a Slack account may have changed since.
func (s *Slack) AlreadyDMed(ctx context.Context, m chat.DMMessage) (bool, error) {
	marker := markerID(blockDMPrefix, m.Key)
	userID, _, err := s.dmTarget(ctx, m)
	if err != nil {
		return false, err
	}
	if userID != "" {
		found, err := s.findPageDM(ctx, userID, marker)
		if _, gone := unreachableDM(err); err != nil && !gone {
			return false, err
		}
		if found {
			return true, nil
		}
	}
	_, found, err := s.findMarked(ctx, m.Channel, marker)
	return found, err
}

// unreachableDM reports whether err is Slack refusing a direct message
// with a person for good (an unknown or deactivated user, a bot): the
// message then goes to the fallback channel.
func unreachableDM(err error) (code string, ok bool) {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return "", false
	}
	switch se.Err {
	case "user_not_found", "user_disabled", "cannot_dm_bot":
		return se.Err, true
	}
	return "", false
}

// dmTarget resolves m.To to a Slack user id; "" and why when the message
// must go to the fallback channel instead.
func (s *Slack) dmTarget(ctx context.Context, m chat.DMMessage) (userID, why string, err error) {
	if m.To == "" {
		return "", m.Why, nil
	}
	s.boundUserCache()
	userID, err = s.slackUser(ctx, m.To)
	switch {
	case errors.Is(err, oncall.ErrUnreachable):
		return "", fmt.Sprintf("no Slack user has the e-mail %s", m.To), nil
	case err != nil:
		return "", "", fmt.Errorf("direct message %s: %w", m.Key, err)
	}
	return userID, "", nil
}

// dmBlocks renders a direct message: its text, a link to the ticket, and a
// context block whose id carries the marker.
func (s *Slack) dmBlocks(m chat.DMMessage, text, marker string) []slack.Block {
	link := fmt.Sprintf("#%d %s", m.Ticket.ID, escape(m.Ticket.Subject))
	if u := s.router.TicketLink(m.Ticket.ID); u != "" {
		link = fmt.Sprintf("<%s|#%d %s>", u, m.Ticket.ID, escape(m.Ticket.Subject))
	}
	return []slack.Block{
		slack.NewSectionBlock(mrkdwn(fitMarkup(text, maxSectionText)), nil, nil),
		slack.NewContextBlock(marker, mrkdwn(fitMarkup(link+" · deskbot rule "+escape(m.Rule), maxSectionText))),
	}
}

// boundUserCache drops, once the users.lookupByEmail cache holds more
// than maxCachedUsers e-mails, those past their TTL, then the oldest.
func (s *Slack) boundUserCache() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.userIDs) <= maxCachedUsers {
		return
	}
	now := s.now()
	for k, c := range s.userIDs {
		if (c.ok && now.Sub(c.at) >= s.emailTTL) || (!c.ok && now.Sub(c.at) >= noSlackUserTTL) {
			delete(s.userIDs, k)
		}
	}
	for len(s.userIDs) > maxCachedUsers {
		var oldest string
		for k, c := range s.userIDs {
			if oldest == "" || c.at.Before(s.userIDs[oldest].at) {
				oldest = k
			}
		}
		delete(s.userIDs, oldest)
	}
}
