package slackfake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// TestBlockKitLimitsEnforced: like Slack, the fake refuses a message whose
// blocks break a Block Kit limit (invalid_blocks) or whose text is over
// 40,000 characters (msg_too_long), on every way in, so that the bot's
// end-to-end tests catch a card Slack would refuse.
func TestBlockKitLimitsEnforced(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(alice))
	startClient(t, srv, srv.AppToken())
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())
	section := func(n int) slack.Block {
		return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("é", n), false, false), nil, nil)
	}
	field := func(n int) slack.Block {
		return slack.NewSectionBlock(nil, []*slack.TextBlockObject{slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("x", n), false, false)}, nil)
	}
	button := func(label, value string) slack.Block {
		return slack.NewActionBlock("a", slack.NewButtonBlockElement("act", value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false)))
	}
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = section(1)
	}
	tests := []struct {
		name   string
		blocks []slack.Block
		text   string
		want   string
	}{
		{"section of 3000", []slack.Block{section(3000)}, "t", ""},
		{"section of 3001", []slack.Block{section(3001)}, "t", slackfake.ErrInvalidBlocks},
		{"empty section text", []slack.Block{section(0)}, "t", slackfake.ErrInvalidBlocks},
		{"field of 2001", []slack.Block{field(2001)}, "t", slackfake.ErrInvalidBlocks},
		{"51 blocks", many, "t", slackfake.ErrInvalidBlocks},
		{"button text of 76", []slack.Block{button(strings.Repeat("b", 76), "1")}, "t", slackfake.ErrInvalidBlocks},
		{"button value of 2001", []slack.Block{button("ok", strings.Repeat("v", 2001))}, "t", slackfake.ErrInvalidBlocks},
		{"context of 11", []slack.Block{contextOf(11)}, "t", slackfake.ErrInvalidBlocks},
		{"text of 40000", nil, strings.Repeat("x", 40000), ""},
		{"text of 40001", nil, strings.Repeat("x", 40001), slackfake.ErrMsgTooLong},
	}
	for _, tt := range tests {
		opts := []slack.MsgOption{slack.MsgOptionText(tt.text, false)}
		if tt.blocks != nil {
			opts = append(opts, slack.MsgOptionBlocks(tt.blocks...))
		}
		_, _, err := api.PostMessageContext(ctx, "C1", opts...)
		if got := slackErr(err); got != tt.want {
			t.Errorf("%s: chat.postMessage = %q (%v), want %q", tt.name, got, err, tt.want)
		}
		_, err = api.PostEphemeralContext(ctx, "C1", alice.ID, opts...)
		if got := slackErr(err); got != tt.want {
			t.Errorf("%s: chat.postEphemeral = %q (%v), want %q", tt.name, got, err, tt.want)
		}
		if err := postResponse(ctx, t, srv, api, opts); (err != nil) != (tt.want != "") {
			t.Errorf("%s: response_url = %v, want error %v", tt.name, err, tt.want != "")
		}
	}
}

func contextOf(n int) slack.Block {
	var els []slack.MixedElement
	for range n {
		els = append(els, slack.NewTextBlockObject(slack.MarkdownType, "c", false, false))
	}
	return slack.NewContextBlock("c", els...)
}

func postResponse(ctx context.Context, t *testing.T, srv *slackfake.Server, api *slack.Client, opts []slack.MsgOption) error {
	t.Helper()
	cmd, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 1", UserID: alice.ID, ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral))
	_, _, err = api.PostMessageContext(ctx, "", opts...)
	return err
}
