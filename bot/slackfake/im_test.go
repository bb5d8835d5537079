package slackfake_test

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// A message the bot posts to a user id lands in their IM, whose id
// conversations.open gives, and conversations.history of that IM returns
// it with its blocks and block ids, as Slack does (what a bot relies on to
// find a DM it sent before a restart).
func TestIMHistoryKeepsBlockIDs(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(slackfake.User{ID: "UALICE", Name: "alice", Email: "alice@example.com"}))
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())
	sec := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "You are on call", false, false), nil, nil,
		slack.SectionBlockOptionBlockID("deskbot_pagedm:1:r/1/1"))
	ch, ts, err := api.PostMessageContext(ctx, "UALICE", slack.MsgOptionText("You are on call", false), slack.MsgOptionBlocks(sec))
	if err != nil {
		t.Fatal(err)
	}
	im, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"UALICE"}})
	if err != nil {
		t.Fatal(err)
	}
	if im.ID != ch || ch[0] != 'D' {
		t.Fatalf("posted to %s, conversations.open says %s; want the same D... id", ch, im.ID)
	}
	h, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: im.ID, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 1 || h.Messages[0].Timestamp != ts || len(h.Messages[0].Blocks.BlockSet) != 1 ||
		h.Messages[0].Blocks.BlockSet[0].ID() != "deskbot_pagedm:1:r/1/1" || h.Messages[0].BotID == "" {
		t.Fatalf("IM history %+v", h.Messages)
	}
}
