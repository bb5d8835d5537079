package slackchat_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/bot/console"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
)

// count tells how many logged lines contain every one of subs.
func (l *recordLogs) count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
next:
	for _, m := range l.msgs {
		for _, s := range subs {
			if !strings.Contains(m, s) {
				continue next
			}
		}
		n++
	}
	return n
}

// alertMention posts an alert on ticket 42 mentioning mention and returns
// its headline as Slack shows it.
func (h *e2e) alertMention(mention string) string {
	h.t.Helper()
	tk, err := h.desk.Ticket(h.ctx, 42)
	if err != nil {
		h.t.Fatal(err)
	}
	key := fmt.Sprintf("mention-%d", len(h.fake.Messages()))
	if err := h.slack.Alert(h.ctx, chat.AlertMessage{Channel: "#it-oncall", Text: "Urgent ticket unassigned", Mention: mention, Ticket: tk, Rule: "page-urgent", Key: key}); err != nil {
		h.t.Fatal(err)
	}
	m, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool {
		return m.Method == "chat.postMessage" && strings.Contains(string(m.Blocks), slackchat.MarkerBlockID(key))
	})
	if err != nil {
		h.t.Fatal(err)
	}
	b := unescaped(m.Blocks)
	i := strings.Index(b, "Urgent ticket unassigned")
	if i < 0 {
		h.t.Fatalf("alert card lacks its text: %s", b)
	}
	j := strings.LastIndex(b[:i], `"text":"`)
	return b[j+len(`"text":"`) : i+len("Urgent ticket unassigned")]
}

// groupLists counts the usergroups.list calls so far.
func (h *e2e) groupLists() int {
	n := 0
	for _, c := range h.fake.Calls() {
		if c.Method == "usergroups.list" {
			n++
		}
	}
	return n
}

func TestAlertMentionsUserGroupByHandle(t *testing.T) {
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	h := newE2E(t, nil, nil, slackchat.WithClock(clk.Now))
	h.fake.AddUserGroup(slackfake.UserGroup{ID: "S0ONCALL", Handle: "it-oncall", Name: "IT on call", Users: []string{"UALICE", "UBOB"}})

	if got, want := h.alertMention("@it-oncall"), "<!subteam^S0ONCALL|@it-oncall> Urgent ticket unassigned"; got != want {
		t.Errorf("@it-oncall: headline %q, want %q", got, want)
	}
	for in, want := range map[string]string{
		"@here":             "<!here>",
		"@channel":          "<!channel>",
		"@everyone":         "<!everyone>",
		"S0OTHER":           "<!subteam^S0OTHER>",
		"UBOB":              "<@UBOB>",
		"carol@example.com": "<@UCAROL>",
		"@IT-Oncall":        "<!subteam^S0ONCALL|@it-oncall>", // handles are case-insensitive
	} {
		if got := h.alertMention(in); got != want+" Urgent ticket unassigned" {
			t.Errorf("%s: headline %q, want %q", in, got, want+" Urgent ticket unassigned")
		}
	}
	if n := h.groupLists(); n != 1 {
		t.Errorf("%d usergroups.list calls, want 1 (the handle map is cached)", n)
	}

	// A handle of no group: posted as text (as before), logged once with
	// the fix, and the groups are not listed again within the minute.
	for range 3 {
		if got := h.alertMention("@it-nobody"); got != "@it-nobody Urgent ticket unassigned" {
			t.Errorf("unknown handle: headline %q", got)
		}
	}
	if n := h.logs.count("no Slack user group has this handle", "handle=@it-nobody", "group's id"); n != 1 {
		t.Errorf("unknown handle logged %d times, want once naming the handle and the fix", n)
	}
	if n := h.groupLists(); n != 1 {
		t.Errorf("%d usergroups.list calls after misses within the minute, want 1", n)
	}

	// A group created later is found on a miss once the minute has passed.
	h.fake.AddUserGroup(slackfake.UserGroup{ID: "S0NET", Handle: "network", Name: "Network"})
	clk.Advance(61 * time.Second)
	if got := h.alertMention("@network"); got != "<!subteam^S0NET|@network> Urgent ticket unassigned" {
		t.Errorf("new group: headline %q", got)
	}
	if n := h.groupLists(); n != 2 {
		t.Errorf("%d usergroups.list calls, want 2 (one refresh on the miss)", n)
	}
	// The map expires after ten minutes: a renamed group's handle follows.
	h.fake.AddUserGroup(slackfake.UserGroup{ID: "S0ONCALL", Handle: "it-oncall-team", Name: "IT on call"})
	clk.Advance(5 * time.Minute)
	if got := h.alertMention("@it-oncall"); !strings.HasPrefix(got, "<!subteam^S0ONCALL|@it-oncall>") {
		t.Errorf("within ten minutes the cached handle is used: %q", got)
	}
	clk.Advance(5 * time.Minute)
	if got := h.alertMention("@it-oncall-team"); !strings.HasPrefix(got, "<!subteam^S0ONCALL|@it-oncall-team>") {
		t.Errorf("after ten minutes: %q", got)
	}
	if n := h.groupLists(); n != 3 {
		t.Errorf("%d usergroups.list calls, want 3", n)
	}
	if n := h.logs.count("handle=@it-nobody"); n != 1 {
		t.Errorf("unknown handle logged %d times in all, want once", n)
	}
	if u := h.fake.UnknownMethods(); len(u) != 0 {
		t.Errorf("methods the fake does not implement: %v", u)
	}
}

func TestAlertMentionWithoutUserGroupsScope(t *testing.T) {
	h := newE2E(t, nil, nil)
	h.fake.AddUserGroup(slackfake.UserGroup{ID: "S0ONCALL", Handle: "it-oncall"})
	h.fake.FailNext("usergroups.list", 1, "missing_scope")
	if got := h.alertMention("@it-oncall"); got != "@it-oncall Urgent ticket unassigned" {
		t.Errorf("headline %q, want the handle as text when the groups cannot be listed", got)
	}
	if !h.logs.has("usergroups:read") || !h.logs.has("missing_scope") {
		t.Error("the failure is not logged with the scope it needs and Slack's error")
	}
	if h.logs.has("no Slack user group has this handle") {
		t.Error("a handle was called unknown although the groups could not be listed")
	}
}

var groupPageRulesYAML = pageRules("1d", "U0DAVE, nobody@example.com",
	`{group: "@it-oncall", after: 10m}`, `{group: "@it-gone", after: 10m}`, "{schedule: it-primary, after: 10m}")

func TestOnCallPageMentionsGroupByHandle(t *testing.T) {
	e := newPageEnvRules(t, groupPageRulesYAML)
	e.fake.AddUser(slackfake.User{ID: "U0DAVE", Name: "dave"})
	e.fake.AddUserGroup(slackfake.UserGroup{ID: "S0ONCALL", Handle: "it-oncall", Name: "IT on call", Users: []string{"UALICE", "UBOB"}})
	e.poll()
	card := e.lastCard()
	if err := has(card, "<!subteam^S0ONCALL|@it-oncall> you are paged (level 1 of it-urgent)", "12:00 UTC · paged <!subteam^S0ONCALL|@it-oncall> (level 1)"); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.fake.Messages() {
		if strings.HasPrefix(m.Channel, "D") {
			t.Errorf("a group level sent a direct message: %+v", m)
		}
	}
	// Level 2 names a group Slack does not have: the card shows the handle
	// as text, the log says once how to fix it.
	e.tick(10 * time.Minute)
	card = e.lastCard()
	if err := has(card, "@it-gone you are paged (level 2 of it-urgent)", "paged <!subteam^S0ONCALL|@it-oncall> (level 1)"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(unescaped(card.Blocks), "subteam^S0ONCALL|@it-gone") {
		t.Fatal("an unknown handle was mentioned as a group")
	}
	// Level 3: the schedule's member given as a Slack id is mentioned as
	// before; the redrawn activity names @it-gone again, unlogged.
	e.tick(10 * time.Minute)
	if err := has(e.lastCard(), "<@U0DAVE> you are paged (level 3 of it-urgent)", "paged @it-gone (level 2)"); err != nil {
		t.Fatal(err)
	}
	if n := e.logs.count("no Slack user group has this handle", "handle=@it-gone"); n != 1 {
		t.Errorf("unknown group handle logged %d times, want once", n)
	}
	if p, _, _ := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", e.ticket, 1)); p.Level != 2 {
		t.Fatalf("page at level %d, want 2", p.Level)
	}
}

func TestOnCallCommandMentionsMembers(t *testing.T) {
	e := newPageEnvRules(t, groupPageRulesYAML)
	// U0DAVE is on call (a Slack id), nobody@example.com is next (no Slack
	// user with that e-mail: shown as text).
	r := e.slash("UCAROL", "/oncall", "")
	want := "it-primary: <@U0DAVE> until Tue 2026-03-03 09:00 CET, then nobody@example.com until Wed 2026-03-04 09:00 CET"
	if r.Text != want {
		t.Fatalf("/oncall = %q, want %q", r.Text, want)
	}
	// The console names people in plain text (issue 23, 6): a Slack id it
	// cannot look up says what it is.
	var out bytes.Buffer
	c, err := console.New(e.router, strings.NewReader("/oncall\n"), &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(e.ctx); err != nil {
		t.Fatal(err)
	}
	if plain := "it-primary: Slack user U0DAVE until Tue 2026-03-03 09:00 CET, then nobody@example.com until"; !strings.Contains(out.String(), plain) {
		t.Errorf("console /oncall = %q, want %q", out.String(), plain)
	}
}
