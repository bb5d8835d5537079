package slackchat

import (
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/oncall"
)

// blockPagePrefix starts the block id that marks a page card with its page
// key, so that any replica finds the card to update in the channel.
const blockPagePrefix = "deskbot_page:"

// pageMarkerID is the block id of the card of page key.
func pageMarkerID(key string) string { return markerID(blockPagePrefix, key) }

// pageView is everything a page card shows. It is rendered from the
// page's durable state alone, so that whoever updates the card (a tick on
// one replica, a click on another) draws the same card.
type pageView struct {
	Headline string     // mrkdwn
	Card     *chat.Card // the ticket card with the page's buttons
	Activity []string   // mrkdwn lines from the page's history
	Key      string
	Rule     string
	Policy   string
}

// renderPage builds the card of page p over the ticket card tc; mention
// turns a target (person or group) into mrkdwn.
func renderPage(p oncall.Page, tc *chat.Card, mention func(oncall.Target) string) pageView {
	card := *tc
	card.Buttons = chat.PageButtons(p)
	text := escape(p.Text)
	var head string
	switch {
	case p.Acked():
		verb := "acknowledged"
		if p.AckVia == oncall.AckViaTake {
			verb = "took the ticket"
		}
		head = fmt.Sprintf(":white_check_mark: %s %s at %s — %s", mention(person(p.AckedBy)), verb, clock(p.AckedAt), text)
	case p.Resolved():
		head = ":ballot_box_with_check: Ticket resolved; paging stopped — " + text
	case p.Exhausted:
		head = fmt.Sprintf(":warning: Nobody acknowledged: %s — %s", escape(chat.WhyExhausted(p)), text)
	case p.Target != nil:
		head = fmt.Sprintf(":rotating_light: %s you are paged (level %d of %s%s) — %s", mention(*p.Target), p.Level+1, escape(p.Policy), chat.RoundSuffix(p.Round), text)
	default:
		head = fmt.Sprintf(":rotating_light: Paging %s — %s", escape(p.Policy), text)
	}
	return pageView{Headline: head, Card: &card, Activity: pageActivity(p, mention), Key: p.Key, Rule: p.Rule, Policy: p.Policy}
}

func person(id string) oncall.Target { return oncall.Target{Kind: oncall.TargetPerson, ID: id} }

func clock(t time.Time) string { return t.UTC().Format("15:04 UTC") }

// pageActivity renders the page's history, one line per event that a
// person reading the card cares about.
func pageActivity(p oncall.Page, mention func(oncall.Target) string) []string {
	var out []string
	var lastPaged time.Time
	escalated := false
	for _, ev := range p.History {
		at := clock(ev.At)
		switch ev.Kind {
		case oncall.EventPaged:
			if ev.Target == nil {
				continue
			}
			line := fmt.Sprintf("%s · paged %s (level %d%s)", at, mention(*ev.Target), ev.Level+1, chat.RoundSuffix(ev.Round))
			switch {
			case ev.Detail != "": // a retry: "attempt 2"
				line += " · " + escape(ev.Detail)
			case !lastPaged.IsZero() && !escalated:
				line = fmt.Sprintf("%s · no acknowledgement after %s: paged %s (level %d%s)", at,
					fmtWait(ev.At.Sub(lastPaged)), mention(*ev.Target), ev.Level+1, chat.RoundSuffix(ev.Round))
			}
			if ev.Detail == "" {
				lastPaged, escalated = ev.At, false
			}
			out = append(out, line)
		case oncall.EventFailed:
			escalated = true // the next level, if any, comes from the failure, not a wait
			out = append(out, fmt.Sprintf("%s · could not page %s: %s", at, targetOf(ev, mention), escape(chat.Truncate(ev.Detail, 120))))
		case oncall.EventEscalate:
			escalated = true
			out = append(out, fmt.Sprintf("%s · %s escalated now", at, mention(person(ev.By))))
		case oncall.EventAcked:
			out = append(out, fmt.Sprintf("%s · acknowledged by %s", at, mention(person(ev.By))))
		case oncall.EventResolved:
			out = append(out, at+" · ticket resolved: paging stopped")
		case oncall.EventExhausted:
			out = append(out, at+" · "+escape(ev.Detail))
		case oncall.EventNoted:
			out = append(out, at+" · private note on the ticket records the acknowledgement")
		}
	}
	return out
}

func targetOf(ev oncall.Event, mention func(oncall.Target) string) string {
	if ev.Target == nil {
		return "the next level"
	}
	return mention(*ev.Target)
}

// fmtWait prints a wait in whole minutes when it is one ("10m").
func fmtWait(d time.Duration) string {
	d = d.Round(time.Second)
	if d%time.Minute == 0 && d > 0 {
		return strings.TrimSuffix(d.String(), "0s")
	}
	return d.String()
}

// pageBlocks renders a page card: headline, ticket card, buttons, activity
// and the marker block that carries the page key.
func pageBlocks(v pageView) []slack.Block {
	c := *v.Card
	c.Headline = v.Headline
	bs := appendActivity(cardBlocks(&c), v.Activity, 300)
	mark := fmt.Sprintf("deskbot on-call page · policy %s", escape(v.Policy))
	if v.Rule != "" {
		mark += " · rule " + escape(v.Rule)
	}
	bs = append(bs, slack.NewContextBlock(pageMarkerID(v.Key), mrkdwn(mark)))
	return bs
}

// pageText is the notification text of a page card.
func pageText(p oncall.Page) string {
	switch {
	case p.Acked():
		return fmt.Sprintf("Page acknowledged by %s — ticket #%d", p.AckedBy, p.TicketID)
	case p.Stopped():
		return fmt.Sprintf("Page stopped — ticket #%d", p.TicketID)
	}
	return fmt.Sprintf("On-call page — ticket #%d: %s", p.TicketID, p.Text)
}
