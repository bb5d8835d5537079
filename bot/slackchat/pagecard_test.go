package slackchat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/internal/chattest"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"

	"github.com/deskbot/deskbot/oncall"
)

// goldenPage is a page of ticket 42 paged at level 1 (alice), escalated
// after 10 minutes to level 2 (bob), after one failed try.
func goldenMention(t oncall.Target) string {
	switch t.ID {
	case "alice@example.com":
		return "<@UALICE>"
	case "bob@example.com":
		return "<@UBOB>"
	}
	return slackchat.Escape(t.ID)
}

func TestGoldenPageCard(t *testing.T) {
	d := fakedesk.New()
	r := routertest.New(t, d)
	tk := d.Snapshot(42)
	card := r.AlertCard(context.Background(), chat.AlertMessage{Ticket: &tk})
	card.Buttons = nil

	p := chattest.Page()
	v := slackchat.RenderPage(p, card, goldenMention)
	out := blocksJSON(t, slackchat.PageBlocks(v))
	for _, want := range []string{
		`<@UBOB> you are paged (level 2 of it-urgent) — Urgent #42 unassigned: Printer on fire &lt;now&gt;`,
		`12:00 UTC · paged <@UALICE> (level 1)`,
		`12:10 UTC · no acknowledgement after 10m: paged <@UBOB> (level 2)`,
		`12:10 UTC · could not page <@UBOB>: ratelimited`,
		`12:10 UTC · paged <@UBOB> (level 2) · attempt 2`,
		`"action_id": "deskbot_page_ack"`, `"value": "42|page-urgent|page-urgent/42/1"`,
		`"block_id": "deskbot_page:page-urgent/42/1"`,
	} {
		if !strings.Contains(unescaped(out), want) {
			t.Errorf("page card lacks %q", want)
		}
	}
	golden(t, "page_card", out)

	// Acknowledged: the headline says who and when, the buttons go.
	at := time.Date(2026, 3, 2, 12, 13, 0, 0, time.UTC)
	p.Ack("bob@example.com", at)
	p.Noted(at)
	out = blocksJSON(t, slackchat.PageBlocks(slackchat.RenderPage(p, card, goldenMention)))
	if strings.Contains(string(out), `"type": "actions"`) {
		t.Fatal("an acknowledged page card still has buttons")
	}
	if !strings.Contains(unescaped(out), ":white_check_mark: <@UBOB> acknowledged at 12:13 UTC") {
		t.Fatalf("acknowledged card:\n%s", out)
	}
	golden(t, "page_card_acked", out)
}

func TestPageCardStates(t *testing.T) {
	card := &bot.Card{Title: "#42 Printer on fire"}
	tests := []struct {
		name string
		edit func(p *oncall.Page)
		want string
	}{
		{"resolved", func(p *oncall.Page) { p.Resolve(p.StartedAt.Add(time.Minute)) }, ":ballot_box_with_check: Ticket resolved; paging stopped"},
		{"exhausted", func(p *oncall.Page) { p.Exhausted, p.Target = true, nil }, ":warning: Nobody acknowledged: every level of it-urgent was paged"},
		{"taken", func(p *oncall.Page) { p.Ack("alice@example.com", p.StartedAt); p.AckVia = oncall.AckViaTake }, "<@UALICE> took the ticket at 12:00 UTC"},
		{"group, second round", func(p *oncall.Page) {
			p.Target, p.Level, p.Round = &oncall.Target{Kind: oncall.TargetGroup, ID: "S0GROUP"}, 2, 1
		}, "S0GROUP you are paged (level 3 of it-urgent, round 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := chattest.Page()
			tt.edit(&p)
			v := slackchat.RenderPage(p, card, goldenMention)
			if !strings.Contains(v.Headline, tt.want) {
				t.Fatalf("headline %q lacks %q", v.Headline, tt.want)
			}
			if p.Stopped() != (len(v.Card.Buttons) == 0) {
				t.Fatalf("buttons %v on a page stopped=%v", v.Card.Buttons, p.Stopped())
			}
		})
	}
}

// A page stopped because its policy left the rules file does not claim,
// on its card, that every level was paged.
func TestPageCardPolicyGone(t *testing.T) {
	p := chattest.Page()
	p.Exhausted, p.Target = true, nil
	p.History = append(p.History, oncall.Event{At: p.StartedAt.Add(time.Hour), Kind: oncall.EventExhausted,
		Detail: "escalation policy it-urgent is no longer in the rules file: nobody left to page"})
	v := slackchat.RenderPage(p, &bot.Card{Title: "#42"}, goldenMention)
	if want := ":warning: Nobody acknowledged: escalation policy it-urgent is no longer in the rules file: nobody left to page — "; !strings.HasPrefix(v.Headline, want) {
		t.Fatalf("headline %q, want prefix %q", v.Headline, want)
	}
	p.History[len(p.History)-1].Detail = "every level of it-urgent paged 1 time(s), nobody acknowledged"
	if v := slackchat.RenderPage(p, &bot.Card{Title: "#42"}, goldenMention); !strings.HasPrefix(v.Headline, ":warning: Nobody acknowledged: every level of it-urgent was paged — ") {
		t.Fatalf("headline %q", v.Headline)
	}
}
