package slackchat_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
)

// samePersonRulesYAML pages alice twice: as the on-call of it-primary,
// then as a user level.
var samePersonRulesYAML = pageRules("1d", "alice@example.com, carol@example.com",
	"{schedule: it-primary, after: 10m}", "{user: alice@example.com, after: 10m}")

// dyingStore is a PageStore whose process dies at a moment the test picks:
// from then on no write reaches the store.
type dyingStore struct {
	oncall.PageStore
	dead atomic.Bool
}

func (d *dyingStore) SwapPage(ctx context.Context, p oncall.Page) (bool, error) {
	if d.dead.Load() {
		return false, errors.New("the process died")
	}
	return d.PageStore.SwapPage(ctx, p)
}

// dyingPager delivers the page through Slack, then kills its store: Slack
// has the messages, the store never learns that the step went out.
type dyingPager struct {
	slack *slackchat.Slack
	store *dyingStore
}

func (d *dyingPager) Page(ctx context.Context, r oncall.PageRequest) error {
	err := d.slack.Page(ctx, r)
	d.store.dead.Store(true)
	return err
}

// pageDMs returns the page direct messages posted to user.
func (e *pageEnv) pageDMs(user string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range e.dms(user) {
		if strings.Contains(string(m.Blocks), slackchat.BlockPageDMPrefix) {
			out = append(out, m)
		}
	}
	return out
}

// A process that dies after Slack took a page's DM but before the store
// recorded the step leaves the step claimed; the replica that takes it
// over when the claim runs out finds the DM in the IM's history and does
// not send it again. The next level paging the same person is a new DM.
func TestOnCallPageDMNeverTwiceAfterCrash(t *testing.T) {
	e := newPageEnvRules(t, samePersonRulesYAML)
	ds := &dyingStore{PageStore: e.st}
	dying, err := oncall.NewEscalator(e.esc.Config(), ds, &dyingPager{slack: e.slack, store: ds}, bot.NewOnCallDesk(e.client))
	if err != nil {
		t.Fatal(err)
	}
	spec := oncall.PageSpec{Rule: "page-urgent", TicketID: e.ticket, Episode: 1, Policy: "it-urgent",
		Channel: "#it-oncall", Text: "Urgent: core switch down"}
	if _, created, err := dying.Start(e.ctx, spec, e.clk.Now()); !created || err == nil {
		t.Fatalf("start on the dying process: created %v, err %v (want created and the store's death)", created, err)
	}
	if n := len(e.pageDMs("UALICE")); n != 1 {
		t.Fatalf("alice has %d page DMs after the first step, want 1", n)
	}
	// The step is still claimed in the store.
	p := e.page()
	if !p.Sending || p.Step != 1 {
		t.Fatalf("stored page after the crash: step %d sending %v", p.Step, p.Sending)
	}
	// Another process: nothing before the claim's 2 minutes run out ...
	e.tick(time.Minute)
	if p := e.page(); !p.Sending {
		t.Fatalf("the claim was taken over before its lease ran out: %+v", p)
	}
	// ... then the step is taken over: confirmed, the card redrawn, and
	// no second DM.
	e.slack.ForgetCards() // a new process remembers nothing
	e.tick(90 * time.Second)
	p = e.page()
	if p.Sending || p.Step != 1 || p.Attempts != 2 {
		t.Fatalf("stored page after the takeover: step %d sending %v attempts %d", p.Step, p.Sending, p.Attempts)
	}
	if dm := e.pageDMs("UALICE"); len(dm) != 1 {
		t.Fatalf("alice has %d page DMs after the takeover, want still 1: %+v", len(dm), dm)
	}
	if n := len(e.cards()); n != 2 || !e.lastCard().Updated {
		t.Fatalf("%d card posts/updates, want the post and an update in place", n)
	}
	// Level 2 pages alice again, as a user level: that is a new step and
	// a new DM.
	e.tick(10 * time.Minute)
	dm := e.pageDMs("UALICE")
	if len(dm) != 2 {
		t.Fatalf("alice has %d page DMs after level 2, want 2", len(dm))
	}
	if err := has(dm[1], "level 2 of it-urgent"); err != nil {
		t.Fatal(err)
	}
}

// Paging the same step again through the transport (a retry after the
// store missed the answer) sends no second DM; a later step does, and a
// first try never looks at the history at all.
func TestSlackPageDMIdempotent(t *testing.T) {
	e := newPageEnv(t)
	p := oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: e.ticket, Episode: 7, Policy: "it-urgent", Channel: "#it-oncall", Text: "disk full"}, e.clk.Now())
	p.Step = 1
	req := oncall.PageRequest{Page: p, Target: oncall.Target{Kind: oncall.TargetPerson, ID: "alice@example.com"},
		Step: 1, Attempt: 1, TicketID: e.ticket, Channel: "#it-oncall", Text: "disk full"}
	histories := func() int {
		n := 0
		for _, c := range e.fake.Calls() {
			if c.Method == "conversations.history" && strings.HasPrefix(c.Form.Get("channel"), "D") {
				n++
			}
		}
		return n
	}
	if err := e.slack.Page(e.ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := histories(); n != 0 {
		t.Fatalf("a first try read the DM history %d times", n)
	}
	retry := req
	retry.Attempt, retry.Retry = 2, true
	for range 2 {
		if err := e.slack.Page(e.ctx, retry); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.pageDMs("UALICE")); n != 1 {
		t.Fatalf("%d DMs after retrying the same step, want 1", n)
	}
	if n := histories(); n != 2 {
		t.Fatalf("%d DM history reads for 2 retries, want one each", n)
	}
	// The next round pages alice again: step 2 is a new DM.
	next := retry
	next.Step, next.Round, next.Attempt, next.Retry = 2, 1, 1, false
	next.Page.Step = 2
	if err := e.slack.Page(e.ctx, next); err != nil {
		t.Fatal(err)
	}
	// A retry of step 2 finds step 2's DM, not only step 1's.
	next.Attempt, next.Retry = 2, true
	if err := e.slack.Page(e.ctx, next); err != nil {
		t.Fatal(err)
	}
	if n := len(e.pageDMs("UALICE")); n != 2 {
		t.Fatalf("%d DMs after step 2 and its retry, want 2", n)
	}
	// Another page of the same ticket (another episode) at step 1 is
	// another message too.
	other := retry
	other.Page.Key = oncall.PageKey("r", e.ticket, 8)
	if err := e.slack.Page(e.ctx, other); err != nil {
		t.Fatal(err)
	}
	if n := len(e.pageDMs("UALICE")); n != 3 {
		t.Fatalf("%d DMs after another page's step 1, want 3", n)
	}
}

// When the history cannot be read (e.g. the app lacks im:history), a
// retried step is sent again: twice is better than never.
func TestSlackPageDMHistoryFailureStillSends(t *testing.T) {
	e := newPageEnv(t)
	p := oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: e.ticket, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall", Text: "disk full"}, e.clk.Now())
	p.Step = 1
	req := oncall.PageRequest{Page: p, Target: oncall.Target{Kind: oncall.TargetPerson, ID: "UBOB"},
		Step: 1, Attempt: 2, Retry: true, TicketID: e.ticket, Channel: "#it-oncall", Text: "disk full"}
	// Both history reads fail: the card's (in the channel) and the DM's.
	e.fake.FailNext("conversations.history", 2, "missing_scope")
	if err := e.slack.Page(e.ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := len(e.pageDMs("UBOB")); n != 1 {
		t.Fatalf("%d DMs, want 1 despite the failed history read", n)
	}
	if !e.logs.has("cannot look for a page's earlier direct message") {
		t.Fatal("the failed history read was not logged")
	}
}
