package slackchat

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
)

var (
	slackUserID  = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	slackGroupID = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)
)

// Alert posts the alert card.
func (s *Slack) Alert(ctx context.Context, m chat.AlertMessage) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("post alert: %w", err)
	}
	headline := escape(m.Text)
	if mention := s.mentionMarkup(ctx, m.Mention); mention != "" {
		headline = mention + " " + headline
	}
	card := s.router.AlertCard(ctx, m)
	blocks := alertBlocks(alertView{Headline: headline, Rule: m.Rule, Key: m.Key, Card: card})
	ch, ts, err := s.api.PostMessageContext(ctx, m.Channel,
		slack.MsgOptionText(escapeFit(fmt.Sprintf("%s — ticket #%d %s", m.Text, m.Ticket.ID, m.Ticket.Subject), maxMessageText), false),
		slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return fmt.Errorf("post alert %s on ticket %d to %s: %w", m.Key, m.Ticket.ID, m.Channel, err)
	}
	s.linkAlert(ctx, m.Ticket.ID, ch, ts) // live threads (threads.go)
	if ch != "" && ch != m.Channel {
		s.rememberChannel(m.Channel, ch)
	}
	return nil
}

// AlreadyAlerted searches the channel's recent history (WithAlertLookback)
// for an alert card carrying key, or a grouped alert naming it.
func (s *Slack) AlreadyAlerted(ctx context.Context, channel, key string) (bool, error) {
	card, token := markerBlockID(key), groupToken(key)
	_, found, err := s.findBlock(ctx, channel, func(id string) bool {
		return id == card || groupHolds(id, token)
	})
	return found, err
}

// findMarked searches the channel's recent history (WithAlertLookback) for
// the message holding a block with id marker: an alert or a page card.
func (s *Slack) findMarked(ctx context.Context, channel, marker string) (cardLoc, bool, error) {
	return s.findBlock(ctx, channel, func(id string) bool { return id == marker })
}

// findBlock searches the channel's recent history (WithAlertLookback) for
// the message holding a block whose id satisfies match.
func (s *Slack) findBlock(ctx context.Context, channel string, match func(id string) bool) (cardLoc, bool, error) {
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
			if slices.ContainsFunc(msg.Blocks.BlockSet, func(b slack.Block) bool { return match(b.ID()) }) {
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

// Grouped alerts. The message shows its first tickets with their lines
// and names the others by number; their lines follow in the thread. The
// ids of the blocks that show or name tickets pack the alerts' keys (as
// groupTokens), so that AlreadyAlerted finds every one in the message
// itself (a thread reply is not in the channel's history).
const (
	groupPrefix      = "deskbot_group:"
	groupHead        = "deskbot_group_head"
	groupFooter      = "deskbot_group_footer"
	groupPreview     = 10  // tickets shown with their line in the message
	groupPerBlock    = 14  // tickets named by number in one context block (their tokens fill a block id)
	groupThreadLines = 30  // lines of one thread reply
	groupLinesPerSec = 10  // lines of one section
	groupMaxTickets  = 500 // tickets of one message (Slack allows 50 blocks); more take several messages
	groupLineMax     = 280 // characters of one line
)

// groupToken is the short form of an alert key in a group's block ids:
// 16 hex digits of its SHA-256.
func groupToken(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// groupBlockID packs the tokens of keys into a block id (at most
// groupPerBlock keys: 255 characters).
func groupBlockID(keys []string) string {
	toks := make([]string, len(keys))
	for i, k := range keys {
		toks[i] = groupToken(k)
	}
	return groupPrefix + strings.Join(toks, ".")
}

// groupHolds reports whether block id id is a group block packing token.
func groupHolds(id, token string) bool {
	rest, ok := strings.CutPrefix(id, groupPrefix)
	return ok && slices.Contains(strings.Split(rest, "."), token)
}

// groupLine is one ticket's line, as mrkdwn: the rule's text when it names
// the ticket's number and subject (the number linked), else the linked
// number, the subject and the text.
func groupLine(a chat.AlertMessage, link string) string {
	num := "#" + strconv.FormatInt(a.Ticket.ID, 10)
	linked := num
	if link != "" {
		linked = "<" + link + "|" + num + ">"
	}
	text := strings.Join(strings.Fields(a.Text), " ")
	if at := chat.TicketNumberAt(text, a.Ticket.ID); at >= 0 && strings.Contains(text, a.Ticket.Subject) {
		return fitMarkup(escape(text[:at])+linked+escape(text[at+len(num):]), groupLineMax)
	}
	line := linked + " " + escape(a.Ticket.Subject)
	if text != "" {
		line += " — " + escape(text)
	}
	return fitMarkup(line, groupLineMax)
}

// groupNumbers names tickets by their linked numbers.
func groupNumbers(as []chat.AlertMessage, link func(int64) string) string {
	parts := make([]string, len(as))
	for i, a := range as {
		num := "#" + strconv.FormatInt(a.Ticket.ID, 10)
		if l := link(a.Ticket.ID); l != "" {
			num = "<" + l + "|" + num + ">"
		}
		parts[i] = num
	}
	return strings.Join(parts, ", ")
}

// groupView is a grouped alert's message and thread, rendered.
type groupView struct {
	blocks  []slack.Block   // the message
	text    string          // its notification text
	replies [][]slack.Block // the thread: lines of the tickets beyond the preview
}

// groupBlocks renders one message of at most groupMaxTickets alerts;
// mention is the markup of the alerts' distinct mentions.
func groupBlocks(g chat.AlertGroupMessage, mention string, link func(int64) string) groupView {
	head := fmt.Sprintf("*%s* — %d tickets:", escape(g.Rule), len(g.Alerts))
	if mention != "" {
		head = mention + " " + head
	}
	foot := "deskbot alert · rule " + escape(g.Rule) + " · grouped: more tickets than its group_over in one poll · act with /ticket show N, /assign N me"
	return listBlocks(g.Alerts, head, foot, g.Rule, link)
}

// listBlocks renders one message naming the tickets of as (at most
// groupMaxTickets): head (mrkdwn) above, foot (mrkdwn) below, the lines of
// the first groupPreview tickets, the others by number and their lines in
// the thread; the blocks that show or name tickets pack the tokens of
// their Keys. title starts the notification text.
func listBlocks(as []chat.AlertMessage, head, foot, title string, link func(int64) string) groupView {
	n := len(as)
	var v groupView
	v.blocks = append(v.blocks, slack.NewSectionBlock(mrkdwn(fitMarkup(head, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(groupHead)))
	preview := as[:min(n, groupPreview)]
	lines := make([]string, len(preview))
	keys := make([]string, len(preview))
	for i, a := range preview {
		lines[i], keys[i] = "• "+groupLine(a, link(a.Ticket.ID)), a.Key
	}
	v.blocks = append(v.blocks, slack.NewSectionBlock(mrkdwn(fitMarkup(strings.Join(lines, "\n"), maxSectionText)), nil, nil,
		slack.SectionBlockOptionBlockID(groupBlockID(keys))))
	rest := as[len(preview):]
	for i := 0; i < len(rest); i += groupPerBlock {
		chunk := rest[i:min(len(rest), i+groupPerBlock)]
		text := groupNumbers(chunk, link)
		if i == 0 {
			text = fmt.Sprintf("and %d more, each with its line in the thread: %s", len(rest), text)
		}
		ck := make([]string, len(chunk))
		for j, a := range chunk {
			ck[j] = a.Key
		}
		v.blocks = append(v.blocks, slack.NewContextBlock(groupBlockID(ck), mrkdwn(fitMarkup(text, maxSectionText))))
	}
	v.blocks = append(v.blocks, slack.NewContextBlock(groupFooter, mrkdwn(foot)))

	plain := make([]string, 0, n)
	for _, a := range as {
		plain = append(plain, fmt.Sprintf("#%d %s", a.Ticket.ID, a.Ticket.Subject))
	}
	v.text = escapeFit(fmt.Sprintf("%s — %d tickets: %s", title, n, strings.Join(plain, "; ")), maxMessageText)

	for i := 0; i < len(rest); i += groupThreadLines {
		chunk := rest[i:min(len(rest), i+groupThreadLines)]
		var reply []slack.Block
		for j := 0; j < len(chunk); j += groupLinesPerSec {
			sec := chunk[j:min(len(chunk), j+groupLinesPerSec)]
			ls := make([]string, len(sec))
			for k, a := range sec {
				ls[k] = "• " + groupLine(a, link(a.Ticket.ID))
			}
			reply = append(reply, slack.NewSectionBlock(mrkdwn(fitMarkup(strings.Join(ls, "\n"), maxSectionText)), nil, nil))
		}
		v.replies = append(v.replies, reply)
	}
	return v
}

// groupMentions is the markup of the distinct mentions of g's alerts.
func (s *Slack) groupMentions(ctx context.Context, g chat.AlertGroupMessage) string {
	var out []string
	seen := map[string]bool{}
	for _, a := range g.Alerts {
		m := strings.TrimSpace(a.Mention)
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		if mk := s.mentionMarkup(ctx, m); mk != "" {
			out = append(out, mk)
		}
	}
	return strings.Join(out, " ")
}

// AlertGroup posts the alerts of g as one message (more than
// groupMaxTickets: one message per groupMaxTickets) naming every ticket,
// and the lines of the tickets beyond the first groupPreview in its thread.
// A thread reply that fails is logged, not returned: the message names
// those tickets too, and its keys are what AlreadyAlerted finds.
func (s *Slack) AlertGroup(ctx context.Context, g chat.AlertGroupMessage) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("post alert group: %w", err)
	}
	mention := s.groupMentions(ctx, g)
	for start := 0; start < len(g.Alerts); start += groupMaxTickets {
		part := g
		part.Alerts = g.Alerts[start:min(len(g.Alerts), start+groupMaxTickets)]
		v := groupBlocks(part, mention, s.router.TicketLink)
		ch, ts, err := s.api.PostMessageContext(ctx, g.Channel, slack.MsgOptionText(v.text, false), slack.MsgOptionBlocks(v.blocks...))
		if err != nil {
			return fmt.Errorf("post alert group of rule %s (%d tickets) to %s: %w", g.Rule, len(part.Alerts), g.Channel, err)
		}
		if ch != "" && ch != g.Channel {
			s.rememberChannel(g.Channel, ch)
		}
		for i, reply := range v.replies {
			text := fmt.Sprintf("%s, part %d of the list", g.Rule, i+2)
			if _, _, err := s.api.PostMessageContext(ctx, cmp.Or(ch, g.Channel), slack.MsgOptionText(text, false),
				slack.MsgOptionBlocks(reply...), slack.MsgOptionTS(ts)); err != nil {
				s.log.Warn("alert group: a thread reply failed; the message still names every ticket",
					"rule", g.Rule, "channel", g.Channel, "part", i+2, "err", err)
			}
		}
	}
	return nil
}
