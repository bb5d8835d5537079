package slackchat_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/internal/routertest"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
)

// Slack's documented Block Kit limits (api.slack.com/reference/block-kit);
// slack-go does not check them, Slack answers invalid_blocks.
const (
	limitBlocks        = 50
	limitTextObject    = 3000 // any text object, section text included
	limitSectionField  = 2000
	limitFields        = 10
	limitHeader        = 150
	limitContextElems  = 10
	limitActionElems   = 25
	limitButtonText    = 75
	limitActionID      = 255
	limitBlockID       = 255
	limitButtonValue   = 2000
	limitMessageText   = 40000
	limitModalTitle    = 24
	limitOptionText    = 75
	limitOptionValue   = 150
	limitStaticOptions = 100
)

// checkBlockKit reports every Slack limit the blocks break, and mrkdwn
// that a cut left broken (an escape or a <link> cut in half).
func checkBlockKit(t *testing.T, what string, bs []slack.Block) {
	t.Helper()
	raw, err := json.Marshal(bs)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	if len(blocks) > limitBlocks {
		t.Errorf("%s: %d blocks, Slack allows %d", what, len(blocks), limitBlocks)
	}
	for i, b := range blocks {
		where := fmt.Sprintf("%s: block %d (%v %v)", what, i, b["type"], b["block_id"])
		if id, _ := b["block_id"].(string); utf8.RuneCountInString(id) > limitBlockID {
			t.Errorf("%s: block_id of %d characters", where, utf8.RuneCountInString(id))
		}
		switch b["type"] {
		case "section":
			if txt, ok := b["text"].(map[string]any); ok {
				checkText(t, where+" text", txt, limitTextObject)
			}
			fs, _ := b["fields"].([]any)
			if len(fs) > limitFields {
				t.Errorf("%s: %d fields, Slack allows %d", where, len(fs), limitFields)
			}
			for j, f := range fs {
				checkText(t, fmt.Sprintf("%s field %d", where, j), f.(map[string]any), limitSectionField)
			}
		case "header":
			checkText(t, where, b["text"].(map[string]any), limitHeader)
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > limitContextElems {
				t.Errorf("%s: %d elements, Slack allows 1 to %d", where, len(els), limitContextElems)
			}
			for j, e := range els {
				checkText(t, fmt.Sprintf("%s element %d", where, j), e.(map[string]any), limitTextObject)
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > limitActionElems {
				t.Errorf("%s: %d elements, Slack allows 1 to %d", where, len(els), limitActionElems)
			}
			for j, e := range els {
				e := e.(map[string]any)
				w := fmt.Sprintf("%s element %d", where, j)
				checkText(t, w, e["text"].(map[string]any), limitButtonText)
				if n := utf8.RuneCountInString(e["action_id"].(string)); n > limitActionID {
					t.Errorf("%s: action_id of %d characters", w, n)
				}
				if v, _ := e["value"].(string); utf8.RuneCountInString(v) > limitButtonValue {
					t.Errorf("%s: value of %d characters", w, utf8.RuneCountInString(v))
				}
			}
		}
	}
}

func checkText(t *testing.T, where string, txt map[string]any, max int) {
	t.Helper()
	s, _ := txt["text"].(string)
	n := utf8.RuneCountInString(s)
	if n == 0 || n > max {
		t.Errorf("%s: text of %d characters, Slack allows 1 to %d", where, n, max)
	}
	if txt["type"] == "mrkdwn" {
		if err := brokenMarkup(s); err != "" {
			t.Errorf("%s: %s in %q", where, err, tail(s))
		}
	}
}

// brokenMarkup finds a cut escape (&am) or an unclosed <link|...>.
func brokenMarkup(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			rest := s[i:]
			if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
				return fmt.Sprintf("a cut escape at byte %d", i)
			}
		case '<':
			if !strings.Contains(s[i:], ">") {
				return fmt.Sprintf("an unclosed < at byte %d", i)
			}
		}
	}
	return ""
}

func checkMessageText(t *testing.T, what, text string) {
	t.Helper()
	if n := utf8.RuneCountInString(text); n > limitMessageText {
		t.Errorf("%s: message text of %d characters, Slack allows %d", what, n, limitMessageText)
	}
}

// hugeTicket is a ticket a demanding desk really holds: a pasted log as
// subject, a 10 KB description, long conversations full of characters
// that mrkdwn must escape.
func hugeTicket() *sdclient.Ticket {
	t0 := time.Date(2026, 11, 5, 9, 30, 0, 0, time.UTC)
	markup := strings.Repeat("<a&b> ", 2000)
	tk := &sdclient.Ticket{
		ID: 42, Subject: strings.Repeat("&lt;Ärger> ", 400), Status: 2, Priority: 4, RequesterID: 501,
		Description: markup, DescriptionText: markup, CreatedAt: t0, UpdatedAt: t0,
		Requester: &sdclient.TicketRequester{ID: 501, Name: strings.Repeat("R&D <ops> ", 300), Email: "carol@example.com"},
	}
	for i := range 5 {
		tk.Conversations = append(tk.Conversations, &sdclient.Conversation{ID: int64(i), BodyText: markup, CreatedAt: t0})
	}
	return tk
}

func TestBlockKitLimitsTicketCard(t *testing.T) {
	for _, link := range []string{"", "https://desk.example.com/a/tickets/42"} {
		tk := hugeTicket()
		c := bot.TicketCard(tk, bot.CardNames{Status: strings.Repeat("Waiting & <vendor> ", 200), Agent: "A", Group: "G"}, link)
		c.Buttons = bot.TicketButtons(tk, false)
		c.Notes = append(c.Notes, strings.Repeat("<&>", 2000))
		checkBlockKit(t, "ticket card, link "+link, slackchat.CardBlocks(c))

		head := "<!subteam^S0ONCALL> " + slackchat.Escape(strings.Repeat("alert & <text> ", 500))
		key := strings.Repeat("k", 400)
		c.Buttons = bot.AlertButtons(tk, strings.Repeat("rule-", 60), key)
		v := slackchat.AlertView{Headline: head, Rule: "rule", Key: key, Card: c, Activity: []string{slackchat.Escape(strings.Repeat("Bob & Co ", 500))}}
		checkBlockKit(t, "alert card, link "+link, slackchat.AlertBlocks(v))

		mention := func(oncall.Target) string { return "<@U1>" }
		pv := slackchat.RenderPage(oncall.Page{Key: "p/42", TicketID: 42, Policy: strings.Repeat("p&", 100), Text: strings.Repeat("page & <text> ", 500)}, c, mention)
		checkBlockKit(t, "page card, link "+link, slackchat.PageBlocks(pv))
	}
	// A search that matches 60 tickets with long subjects.
	d := fakedesk.New()
	for i := int64(1); i <= 60; i++ {
		d.Tickets[1000+i] = &sdclient.Ticket{ID: 1000 + i, Subject: strings.Repeat("<&> long subject ", 40), Status: 2, Priority: 4, WorkspaceID: sdclient.Ptr[int64](1)}
	}
	r := routertest.New(t, d)
	resp := routertest.Handle(r, "UALICE", "/ticket", "search priority:4")
	if resp.Failed || resp.Card == nil {
		t.Fatalf("search: %+v", resp)
	}
	checkBlockKit(t, "search result", slackchat.CardBlocks(resp.Card))
}

func TestAnswerTextWithinSlackLimit(t *testing.T) {
	for _, text := range []string{strings.Repeat("x", 50000), strings.Repeat("<&>", 20000)} {
		got := slackchat.MessageText(bot.Reply{Text: text})
		checkMessageText(t, "answer", got)
		if err := brokenMarkup(got); err != "" {
			t.Errorf("answer: %s", err)
		}
		if !strings.HasSuffix(got, "…") {
			t.Errorf("a cut answer does not end in an ellipsis: %q", tail(got))
		}
	}
	if got := slackchat.MessageText(bot.Reply{Text: "a < b"}); got != "a &lt; b" {
		t.Errorf("short answer = %q", got)
	}
}
