package slackchat

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
)

// Block ids of the cards; alerts are recognised and rebuilt by them.
const (
	blockAlertText  = "alert_text"
	blockTitle      = "ticket_title"
	blockFields     = "ticket_fields"
	blockLines      = "ticket_lines"
	blockNotes      = "ticket_notes"
	blockActions    = "ticket_actions"
	blockActivity   = "deskbot_activity"
	blockMarkPrefix = "deskbot_alert:"
)

// escape makes text safe for Slack mrkdwn.
func escape(s string) string { return mrkdwnEscaper.Replace(s) }

// mrkdwnEscaper is read-only after initialisation.
var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// Slack's Block Kit limits, in characters; slack-go does not check them
// and Slack refuses the whole message (invalid_blocks) when one is broken.
const (
	maxSectionText = 3000  // a section's text; any text object
	maxFieldText   = 2000  // one field of a section
	maxMessageText = 40000 // a message's text
)

// escapeFit escapes s for mrkdwn and cuts it, at a character and never
// inside an escape, so that the result with its "…" has at most n
// characters.
func escapeFit(s string, n int) string {
	e := escape(s)
	if utf8.RuneCountInString(e) <= n {
		return e
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		piece := escape(string(r))
		l := utf8.RuneCountInString(piece)
		if used+l > n-1 {
			break
		}
		b.WriteString(piece)
		used += l
	}
	return b.String() + "…"
}

// fitMarkup cuts mrkdwn that is already escaped to at most n characters
// with a "…", never inside an escape (&amp;) or a <link|mention>.
func fitMarkup(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := len(r)
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == '>' || r[i] == ';' || r[i] == '\n' {
			break
		}
		if r[i] == '<' || r[i] == '&' {
			cut = i
			break
		}
	}
	return string(r[:cut]) + "…"
}

// messageText is a Reply's message text as mrkdwn within Slack's limit.
func messageText(resp chat.Reply) string {
	if resp.Markup != "" {
		return fitMarkup(resp.Markup, maxMessageText)
	}
	return escapeFit(resp.Text, maxMessageText)
}

// cardBlocks renders a chat.Card as Block Kit within Slack's limits: long text
// is cut with an ellipsis, never inside an escape or a link.
func cardBlocks(c *chat.Card) []slack.Block {
	var bs []slack.Block
	if c.Headline != "" {
		bs = append(bs, slack.NewSectionBlock(mrkdwn(fitMarkup(c.Headline, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockAlertText)))
	}
	title := "*" + escapeFit(c.Title, maxSectionText-2) + "*"
	if c.URL != "" {
		room := max(maxSectionText-utf8.RuneCountInString(c.URL)-6, 40)
		title = fmt.Sprintf("*<%s|%s>*", c.URL, escapeFit(c.Title, room))
	}
	bs = append(bs, slack.NewSectionBlock(mrkdwn(title), nil, nil, slack.SectionBlockOptionBlockID(blockTitle)))
	if len(c.Fields) > 0 {
		var fs []*slack.TextBlockObject
		for i, f := range c.Fields {
			if i == 10 { // Slack allows ten fields per section
				break
			}
			label := "*" + escapeFit(f.Label, 100) + "*\n"
			fs = append(fs, mrkdwn(label+escapeFit(f.Value, maxFieldText-utf8.RuneCountInString(label))))
		}
		bs = append(bs, slack.NewSectionBlock(nil, fs, nil, slack.SectionBlockOptionBlockID(blockFields)))
	}
	if len(c.Lines) > 0 {
		var b strings.Builder
		room := maxSectionText
		for i, l := range c.Lines {
			sep := "• "
			if i > 0 {
				sep = "\n• "
			}
			if room < len(sep)+2 {
				break
			}
			line := sep + escapeFit(l, room-len(sep))
			b.WriteString(line)
			room -= utf8.RuneCountInString(line)
		}
		bs = append(bs, slack.NewSectionBlock(mrkdwn(b.String()), nil, nil, slack.SectionBlockOptionBlockID(blockLines)))
	}
	if len(c.Notes) > 0 {
		var els []slack.MixedElement
		for i, n := range c.Notes {
			if i == 10 {
				break
			}
			if n == "" {
				continue // Slack refuses empty text
			}
			els = append(els, mrkdwn(escapeFit(n, maxSectionText)))
		}
		if len(els) > 0 {
			bs = append(bs, slack.NewContextBlock(blockNotes, els...))
		}
	}
	if len(c.Buttons) > 0 {
		var els []slack.BlockElement
		for _, b := range c.Buttons {
			btn := slack.NewButtonBlockElement(b.ActionID, b.Value, plain(b.Label))
			if b.Style != "" {
				btn = btn.WithStyle(slack.Style(b.Style))
			}
			els = append(els, btn)
		}
		bs = append(bs, slack.NewActionBlock(blockActions, els...))
	}
	return bs
}

// alertView is everything an alert card shows; a click rebuilds the card
// from the old message's blocks plus the fresh ticket.
type alertView struct {
	Headline string     // mrkdwn: mention and the rule's text
	Rule     string     // rule name
	Key      string     // firing key: AlreadyAlerted finds the card by it
	Card     *chat.Card // the ticket card with alert buttons
	Activity []string   // mrkdwn lines: who did what
}

// markerBlockID is the block id that marks an alert card with its key.
func markerBlockID(key string) string { return markerID(blockMarkPrefix, key) }

// markerID is prefix+key, or prefix+"sha256:"+hex(sha256(key)) when that
// would exceed Slack's 255 characters of a block id.
func markerID(prefix, key string) string {
	if len(prefix)+len(key) <= 255 {
		return prefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return prefix + "sha256:" + hex.EncodeToString(sum[:])
}

// alertBlocks renders an alert card: headline, ticket card, activity, and
// a context block whose block id carries the alert key.
func alertBlocks(v alertView) []slack.Block {
	c := *v.Card
	c.Headline = v.Headline
	bs := appendActivity(cardBlocks(&c), v.Activity, maxSectionText)
	mark := "deskbot alert"
	if v.Rule != "" {
		mark += " · rule " + escape(v.Rule)
	}
	bs = append(bs, slack.NewContextBlock(markerBlockID(v.Key), mrkdwn(mark)))
	return bs
}

// appendActivity appends the context block of a card's activity: its last
// ten lines (Slack's limit of elements), each cut to n characters.
func appendActivity(bs []slack.Block, activity []string, n int) []slack.Block {
	if len(activity) == 0 {
		return bs
	}
	act := activity[max(len(activity)-10, 0):]
	els := make([]slack.MixedElement, 0, len(act))
	for _, a := range act {
		els = append(els, mrkdwn(fitMarkup(a, n)))
	}
	return append(bs, slack.NewContextBlock(blockActivity, els...))
}

// oldAlert reads the headline and activity back from an alert message.
func oldAlert(blocks []slack.Block) (headline string, activity []string, isAlert bool) {
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.SectionBlock:
			if b.BlockID == blockAlertText && b.Text != nil {
				headline = b.Text.Text
			}
		case *slack.ContextBlock:
			if b.BlockID == blockActivity {
				for _, e := range b.ContextElements.Elements {
					if t, ok := e.(*slack.TextBlockObject); ok {
						activity = append(activity, t.Text)
					}
				}
			}
			if strings.HasPrefix(b.BlockID, blockMarkPrefix) {
				isAlert = true
			}
		}
	}
	return headline, activity, isAlert
}
