package slackfake_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// usergroups.users.list answers the members of one group through the real
// client, and no_such_subteam for an unknown or (unless asked) disabled
// group, as Slack does.
func TestUserGroupMembers(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUserGroups(
		slackfake.UserGroup{ID: "S0ONCALL", Handle: "it-oncall", Users: []string{"UALICE", "UBOB"}},
		slackfake.UserGroup{ID: "S0OLD", Handle: "old", Users: []string{"UCAROL"}, Disabled: true},
	))
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())
	ids, err := api.GetUserGroupMembersContext(ctx, "S0ONCALL")
	if err != nil || !slices.Equal(ids, []string{"UALICE", "UBOB"}) {
		t.Fatalf("members of S0ONCALL: %v, %v", ids, err)
	}
	for _, id := range []string{"S0NONE", "S0OLD"} {
		_, err := api.GetUserGroupMembersContext(ctx, id)
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != "no_such_subteam" {
			t.Errorf("members of %s: %v, want no_such_subteam", id, err)
		}
	}
	ids, err = api.GetUserGroupMembersContext(ctx, "S0OLD", slack.GetUserGroupMembersOptionIncludeDisabled(true))
	if err != nil || !slices.Equal(ids, []string{"UCAROL"}) {
		t.Fatalf("members of disabled S0OLD with include_disabled: %v, %v", ids, err)
	}
}
