package slackchat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
)

// dave is on call but has no Slack account (his e-mail is unknown to
// Slack): the page must not wait on retries that cannot succeed, nor be
// lost; the next level is paged at once and the card says why.
var unreachableRulesYAML = pageRules("1w", "dave@example.com",
	"{schedule: it-primary, after: 10m}", "{user: bob@example.com, after: 10m}")

func TestOnCallTargetWithoutSlackAccountEscalatesAtOnce(t *testing.T) {
	e := newPageEnvRules(t, unreachableRulesYAML)
	e.poll()
	// The first step could not reach dave: bob is paged in the same
	// breath, not after minutes of retries of a lookup that cannot succeed.
	e.waitPage(func(p oncall.Page) bool { return !p.Sending && p.Level == 1 })
	if dm := e.dms("UBOB"); len(dm) != 1 || has(dm[0], "level 2 of it-urgent") != nil {
		t.Fatalf("bob's DMs right after dave could not be paged: %+v", dm)
	}
	card := e.lastCard()
	if err := has(card, "<@UBOB> you are paged (level 2 of it-urgent)", "could not page dave@example.com", "no Slack account"); err != nil {
		t.Fatal(err)
	}
	// And nothing more until bob's 10 minutes are up.
	e.tick(5 * time.Minute)
	if n := len(e.dms("UBOB")); n != 1 {
		t.Fatalf("bob paged %d times", n)
	}
	p, _, _ := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1))
	if p.Step != 2 || strings.Count(unescaped(card.Blocks), "could not page") != 1 {
		t.Fatalf("page %+v, card %s", p, unescaped(card.Blocks))
	}
}

// A member given as a Slack id no user of the workspace has (a typo, or
// an account gone) is unreachable too: the next level at once.
func TestOnCallUnknownSlackIDEscalatesAtOnce(t *testing.T) {
	e := newPageEnvRules(t, strings.Replace(unreachableRulesYAML, "members: [dave@example.com]", "members: [U0NOSUCH]", 1))
	e.poll()
	e.waitPage(func(p oncall.Page) bool { return !p.Sending && p.Level == 1 })
	if dm := e.dms("UBOB"); len(dm) != 1 {
		t.Fatalf("bob's DMs right after U0NOSUCH could not be paged: %+v", dm)
	}
	if err := has(e.lastCard(), "<@UBOB> you are paged (level 2 of it-urgent)", "could not page <@U0NOSUCH>: U0NOSUCH is not a user of this Slack workspace"); err != nil {
		t.Fatal(err)
	}
}

// Escalate now on the last level has nobody left to page: the answer says
// so instead of claiming an escalation.
func TestOnCallEscalateNowOnLastLevel(t *testing.T) {
	e := newPageEnvRules(t, strings.Replace(unreachableRulesYAML, "members: [dave@example.com]", "members: [alice@example.com]", 1))
	e.poll()
	e.tick(10 * time.Minute) // level 2: bob, the last
	if n := len(e.dms("UBOB")); n != 1 {
		t.Fatalf("bob paged %d times", n)
	}
	e.clk.Advance(time.Minute)
	e.clickPage("UBOB", chat.ActionPageEscalate)
	m, err := e.fake.WaitMessage(e.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postEphemeral" && m.User == "UBOB"
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "Nobody is left to page: every level of it-urgent was paged") {
		t.Fatalf("answer %q", m.Text)
	}
	e.waitPage(func(p oncall.Page) bool { return p.Exhausted && p.Done })
}
