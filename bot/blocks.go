package bot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

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

// maxSectionText is Slack's limit on a section's text.
const maxSectionText = 3000

// cardBlocks renders a Card as Block Kit.
func cardBlocks(c *Card) []slack.Block {
	var bs []slack.Block
	if c.Headline != "" {
		bs = append(bs, slack.NewSectionBlock(mrkdwn(truncate(c.Headline, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockAlertText)))
	}
	title := "*" + escape(c.Title) + "*"
	if c.URL != "" {
		title = fmt.Sprintf("*<%s|%s>*", c.URL, escape(c.Title))
	}
	bs = append(bs, slack.NewSectionBlock(mrkdwn(truncate(title, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockTitle)))
	if len(c.Fields) > 0 {
		var fs []*slack.TextBlockObject
		for i, f := range c.Fields {
			if i == 10 { // Slack allows ten fields per section
				break
			}
			fs = append(fs, mrkdwn(fmt.Sprintf("*%s*\n%s", escape(f.Label), escape(truncate(f.Value, 1900)))))
		}
		bs = append(bs, slack.NewSectionBlock(nil, fs, nil, slack.SectionBlockOptionBlockID(blockFields)))
	}
	if len(c.Lines) > 0 {
		var lines []string
		for _, l := range c.Lines {
			lines = append(lines, "• "+escape(l))
		}
		bs = append(bs, slack.NewSectionBlock(mrkdwn(truncate(strings.Join(lines, "\n"), maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockLines)))
	}
	if len(c.Notes) > 0 {
		var els []slack.MixedElement
		for i, n := range c.Notes {
			if i == 10 {
				break
			}
			els = append(els, mrkdwn(escape(n)))
		}
		bs = append(bs, slack.NewContextBlock(blockNotes, els...))
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
	Headline string   // mrkdwn: mention and the rule's text
	Rule     string   // rule name
	Key      string   // firing key: AlreadyAlerted finds the card by it
	Card     *Card    // the ticket card with alert buttons
	Activity []string // mrkdwn lines: who did what
}

// markerBlockID is the block id that marks an alert card with its key.
func markerBlockID(key string) string {
	if len(blockMarkPrefix)+len(key) <= 255 {
		return blockMarkPrefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return blockMarkPrefix + "sha256:" + hex.EncodeToString(sum[:])
}

// alertBlocks renders an alert card: headline, ticket card, activity, and
// a context block whose block id carries the alert key.
func alertBlocks(v alertView) []slack.Block {
	c := *v.Card
	c.Headline = v.Headline
	bs := cardBlocks(&c)
	if len(v.Activity) > 0 {
		act := v.Activity
		if len(act) > 10 {
			act = act[len(act)-10:]
		}
		var els []slack.MixedElement
		for _, a := range act {
			els = append(els, mrkdwn(a))
		}
		bs = append(bs, slack.NewContextBlock(blockActivity, els...))
	}
	mark := "deskbot alert"
	if v.Rule != "" {
		mark += " · rule " + escape(v.Rule)
	}
	bs = append(bs, slack.NewContextBlock(markerBlockID(v.Key), mrkdwn(mark)))
	return bs
}

// alertButtonValue packs what a click needs: ticket id, rule and key.
func alertButtonValue(id int64, rule, key string) string {
	return fmt.Sprintf("%d|%s|%s", id, rule, key)
}

// splitButtonValue unpacks alertButtonValue; a plain ticket card's value is
// just the id.
func splitButtonValue(v string) (id, rule, key string) {
	id, rest, _ := strings.Cut(v, "|")
	rule, key, _ = strings.Cut(rest, "|")
	return id, rule, key
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
