package slackchat_test

import (
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/internal/testkit"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// groupRulesYAML's it-urgent policy pages alice (the rota), then the user
// group S0GROUP (by id), then @net-oncall (by handle).
var groupRulesYAML = pageRules("1d", "alice@example.com",
	"{schedule: it-primary, after: 10m}", "{group: S0GROUP, after: 15m}", `{group: "@net-oncall", after: 15m}`)

// The people of a policy's group levels, found through Slack's
// usergroups.users.list over the real client, count as involved in its
// pages; others in the workspace do not.
func TestSlackGroupMembersInvolved(t *testing.T) {
	clk := clockwork.NewFakeClockAt(pageT0)
	e := newE2E(t, nil, nil, slackchat.WithClock(clk.Now))
	e.fake.AddUser(slackfake.User{ID: "UDAVE", Name: "dave", Email: "dave@example.com"})
	e.fake.AddUser(slackfake.User{ID: "UNINA", Name: "nina", Email: "nina@example.com"})
	e.fake.AddUserGroup(slackfake.UserGroup{ID: "S0GROUP", Handle: "it-oncall", Users: []string{"UDAVE"}})
	e.fake.AddUserGroup(slackfake.UserGroup{ID: "S0NET", Handle: "net-oncall", Users: []string{"UNINA", "UBOB"}})
	set := testkit.Rules(t, groupRulesYAML)
	pol := set.OnCall().Policy("it-urgent")
	for _, tc := range []struct {
		user, email string
		want        bool
	}{
		{"UDAVE", "dave@example.com", true},   // S0GROUP, by id
		{"UNINA", "nina@example.com", true},   // @net-oncall, by handle
		{"UALICE", "alice@example.com", true}, // the schedule
		{"UCAROL", "carol@example.com", false},
	} {
		if pol.Involves(tc.email, tc.user) && tc.user != "UALICE" {
			t.Errorf("Involves counts group member %s without Slack", tc.user)
		}
		got, err := pol.InvolvesWithGroups(e.ctx, tc.email, tc.user, e.slack)
		if got != tc.want || err != nil {
			t.Errorf("InvolvesWithGroups(%s) = %v, %v; want %v", tc.user, got, err, tc.want)
		}
	}
	lists := func() int {
		n := 0
		for _, c := range e.fake.Calls() {
			if c.Method == "usergroups.users.list" {
				n++
			}
		}
		return n
	}
	// Both groups were read once (carol made the bot look at both) and
	// are reused until groupMembersTTL runs out.
	if n := lists(); n != 2 {
		t.Fatalf("%d usergroups.users.list calls, want 2", n)
	}
	e.fake.AddUserGroup(slackfake.UserGroup{ID: "S0GROUP", Handle: "it-oncall", Users: []string{"UDAVE", "UCAROL"}})
	if ok, _ := pol.InvolvesWithGroups(e.ctx, "carol@example.com", "UCAROL", e.slack); ok || lists() != 2 {
		t.Fatalf("within the TTL: carol involved %v after %d lists; want the cached answer", ok, lists())
	}
	clk.Advance(slackchat.GroupMembersTTL + time.Second)
	if ok, err := pol.InvolvesWithGroups(e.ctx, "carol@example.com", "UCAROL", e.slack); !ok || err != nil {
		t.Fatalf("after the TTL: carol, added to the group, involved %v, %v", ok, err)
	}
	// A group Slack does not know counts nobody and says so.
	if _, err := e.slack.GroupMembers(e.ctx, "S0GONE"); err == nil {
		t.Fatal("members of an unknown group: no error")
	}
	if _, err := e.slack.GroupMembers(e.ctx, "@nobody-has-this"); err == nil {
		t.Fatal("members of an unknown handle: no error")
	}
	if ids, err := e.slack.GroupMembers(e.ctx, "@NET-oncall"); err != nil || !slices.Equal(ids, []string{"UNINA", "UBOB"}) {
		t.Fatalf("members of @NET-oncall: %v, %v", ids, err)
	}
}
