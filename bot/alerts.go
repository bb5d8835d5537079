package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/slack-go/slack"
)

// AlertMessage is one alert of a rule, to be posted as a card with the
// buttons Assign to me, Acknowledge and Resolve.
type AlertMessage struct {
	Channel string // channel id or #name
	Text    string // the rule's rendered text
	Mention string // a Slack user (<@U..>, U.., e-mail), user group (<!subteam^S..>, S.., @handle), @here/@channel/@everyone, or empty
	Ticket  *sdclient.Ticket
	Rule    string // rule name
	Key     string // unique per firing; AlreadyAlerted looks for it
}

// Notifier posts alerts and tells whether one was already posted (so that a
// firing resumed after a crash does not post twice). Slack and Console
// implement it.
type Notifier interface {
	Alert(ctx context.Context, m AlertMessage) error
	AlreadyAlerted(ctx context.Context, channel, key string) (bool, error)
}

func (m AlertMessage) check() error {
	switch {
	case m.Ticket == nil:
		return errors.New("alert has no ticket")
	case m.Channel == "":
		return fmt.Errorf("alert on ticket %d has no channel", m.Ticket.ID)
	case m.Key == "":
		return fmt.Errorf("alert on ticket %d has no key", m.Ticket.ID)
	}
	return nil
}

// alertButtons are the alert's buttons, each carrying ticket, rule and key.
func alertButtons(t *sdclient.Ticket, rule, key string) []Button {
	bs := ticketButtons(t, true)
	for i := range bs {
		bs[i].Value = alertButtonValue(t.ID, rule, key)
	}
	return bs
}

var (
	slackUserID  = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	slackGroupID = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)
)

// Alert posts the alert card.
func (s *Slack) Alert(ctx context.Context, m AlertMessage) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("post alert: %w", err)
	}
	headline := escape(m.Text)
	if mention := s.mentionMarkup(ctx, m.Mention); mention != "" {
		headline = mention + " " + headline
	}
	card := s.router.ticketCard(ctx, m.Ticket)
	card.Buttons = alertButtons(m.Ticket, m.Rule, m.Key)
	blocks := alertBlocks(alertView{Headline: headline, Rule: m.Rule, Key: m.Key, Card: card})
	ch, _, err := s.api.PostMessageContext(ctx, m.Channel,
		slack.MsgOptionText(escapeFit(fmt.Sprintf("%s — ticket #%d %s", m.Text, m.Ticket.ID, m.Ticket.Subject), maxMessageText), false),
		slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return fmt.Errorf("post alert %s on ticket %d to %s: %w", m.Key, m.Ticket.ID, m.Channel, err)
	}
	if ch != "" && ch != m.Channel {
		s.rememberChannel(m.Channel, ch)
	}
	return nil
}

// AlreadyAlerted searches the channel's recent history (WithAlertLookback)
// for an alert card carrying key.
func (s *Slack) AlreadyAlerted(ctx context.Context, channel, key string) (bool, error) {
	_, found, err := s.findMarked(ctx, channel, markerBlockID(key))
	return found, err
}

// findMarked searches the channel's recent history (WithAlertLookback) for
// the message holding a block with id marker: an alert or a page card.
func (s *Slack) findMarked(ctx context.Context, channel, marker string) (cardLoc, bool, error) {
	id := s.channelID(ctx, channel)
	params := &slack.GetConversationHistoryParameters{
		ChannelID: id,
		Limit:     200,
		Oldest:    strconv.FormatFloat(float64(s.now().Add(-s.lookback).UnixNano())/1e9, 'f', 6, 64),
	}
	for range 10 {
		h, err := s.api.GetConversationHistoryContext(ctx, params)
		if err != nil {
			return cardLoc{}, false, fmt.Errorf("conversations.history %s: %w", channel, err)
		}
		for _, msg := range h.Messages {
			if hasBlock(msg.Blocks.BlockSet, marker) {
				return cardLoc{channel: cmp.Or(msg.Channel, id), ts: msg.Timestamp}, true, nil
			}
		}
		if !h.HasMore || h.ResponseMetaData.NextCursor == "" {
			return cardLoc{}, false, nil
		}
		params.Cursor = h.ResponseMetaData.NextCursor
	}
	return cardLoc{}, false, nil
}

// hasBlock reports whether blocks hold one with block id id.
func hasBlock(blocks []slack.Block, id string) bool {
	for _, b := range blocks {
		if b.ID() == id {
			return true
		}
	}
	return false
}
