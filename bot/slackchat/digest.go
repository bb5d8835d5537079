package slackchat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/chat"
)

// blockDigestPrefix starts the block id of a digest's footer, followed by
// its rule's name.
const blockDigestPrefix = "deskbot_digest:"

// PostDigest posts a digest rule's summary to m.Channel (chat.postMessage),
// or, when prev names the message posted earlier the same day, updates it
// in place (chat.update): one Slack call per run. A message deleted
// meanwhile (message_not_found) is posted again.
func (s *Slack) PostDigest(ctx context.Context, m chat.DigestMessage, prev chat.DigestRef) (chat.DigestRef, error) {
	if m.Channel == "" {
		return chat.DigestRef{}, errors.New("post digest: no channel")
	}
	lines := m.Lines(chat.DigestFormat{
		Esc:       escape,
		Link:      func(u, label string) string { return "<" + u + "|" + label + ">" },
		Bold:      func(t string) string { return "*" + t + "*" },
		TicketURL: s.router.TicketLink,
	})
	text := fmt.Sprintf("Desk digest: %d open tickets", m.Total)
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(digestBlocks(m.Rule, lines)...)}
	if prev.TS != "" {
		ch, ts, _, err := s.api.UpdateMessageContext(ctx, prev.Channel, prev.TS, opts...)
		var se slack.SlackErrorResponse
		switch {
		case err == nil:
			return chat.DigestRef{Channel: ch, TS: ts}, nil
		case !errors.As(err, &se) || se.Err != "message_not_found":
			return chat.DigestRef{}, fmt.Errorf("update digest %s in %s: %w", m.Rule, prev.Channel, err)
		}
	}
	ch, ts, err := s.api.PostMessageContext(ctx, m.Channel, opts...)
	if err != nil {
		return chat.DigestRef{}, fmt.Errorf("post digest %s to %s: %w", m.Rule, m.Channel, err)
	}
	if ch != "" && ch != m.Channel {
		s.rememberChannel(m.Channel, ch)
	}
	return chat.DigestRef{Channel: ch, TS: ts}, nil
}

// digestBlocks puts a digest's lines in sections of at most
// maxSectionText characters (never cutting a line), then a footer whose
// block id names the rule.
func digestBlocks(rule string, lines []string) []slack.Block {
	var bs []slack.Block
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			bs = append(bs, slack.NewSectionBlock(mrkdwn(fitMarkup(cur.String(), maxSectionText)), nil, nil))
			cur.Reset()
		}
	}
	for _, l := range lines {
		if cur.Len() > 0 && cur.Len()+1+len(l) > maxSectionText {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(l)
	}
	flush()
	return append(bs, slack.NewContextBlock(markerID(blockDigestPrefix, rule), mrkdwn("deskbot digest · rule "+escape(rule)+" · updated through the day")))
}
