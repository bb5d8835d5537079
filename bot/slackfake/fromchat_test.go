package slackfake_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// TestPeoplesMessagesThroughSlackGo reads a person's message, its thread
// and permalink with the real slack-go client, and unfurls a link in it.
func TestPeoplesMessagesThroughSlackGo(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(alice), slackfake.WithChannels(slackfake.Channel{ID: "C0DESK", Name: "desk"}))
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())
	parent, err := srv.UserMessage(alice.ID, "#desk", "Printer on fire\nsmoke", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, txt := range []string{"one", "two", "three"} {
		if _, err := srv.UserMessage(alice.ID, "C0DESK", txt, parent); err != nil {
			t.Fatal(err)
		}
	}
	msgs, more, next, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C0DESK", Timestamp: parent, Limit: 3})
	if err != nil || !more || next == "" || len(msgs) != 3 {
		t.Fatalf("replies page 1 = %d messages, more %v, cursor %q, %v", len(msgs), more, next, err)
	}
	if m := msgs[0]; m.User != alice.ID || m.Text != "Printer on fire\nsmoke" || m.ReplyCount != 3 || m.ThreadTimestamp != parent || m.BotID != "" {
		t.Errorf("parent = %+v", m.Msg)
	}
	rest, more, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C0DESK", Timestamp: parent, Limit: 3, Cursor: next})
	if err != nil || more || len(rest) != 1 || rest[0].Text != "three" || rest[0].ThreadTimestamp != parent {
		t.Errorf("replies page 2 = %+v, more %v, %v", rest, more, err)
	}
	if _, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C0DESK", Timestamp: "9.9"}); err == nil || err.Error() != "thread_not_found" {
		t.Errorf("replies of no message: %v; want thread_not_found", err)
	}
	link, err := api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: "C0DESK", Ts: parent})
	if err != nil || link != "https://fake.slack.com/archives/C0DESK/p"+strings.ReplaceAll(parent, ".", "") {
		t.Errorf("permalink = %q, %v", link, err)
	}

	c := startClient(t, srv, srv.AppToken())
	env, ts, err := srv.LinkShared(ctx, alice.ID, "C0DESK", "https://desk.example.com/a/tickets/42")
	if err != nil {
		t.Fatal(err)
	}
	evt, _ := c.waitEvent(t, 0, isEnvelope(env.ID))
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	ls, ok2 := ev.InnerEvent.Data.(*slackevents.LinkSharedEvent)
	if !ok || !ok2 || ls.MessageTimeStamp != ts || ls.Channel != "C0DESK" || ls.User != alice.ID || len(ls.Links) != 1 || ls.Links[0].Domain != "desk.example.com" {
		t.Fatalf("link_shared = %+v", ev.InnerEvent.Data)
	}
	card := slack.Attachment{Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*#42* Printer", false, false), nil, nil)}}}
	if _, _, _, err := api.UnfurlMessageContext(ctx, "C0DESK", ts, map[string]slack.Attachment{"https://desk.example.com/a/tickets/43": card}); err == nil || err.Error() != "cannot_unfurl_url" {
		t.Errorf("unfurl of a URL not in the message: %v; want cannot_unfurl_url", err)
	}
	if _, _, _, err := api.UnfurlMessageContext(ctx, "C0DESK", ts, map[string]slack.Attachment{ls.Links[0].URL: card}); err != nil {
		t.Fatal(err)
	}
	u := srv.Unfurls()
	if len(u) != 1 || u[0].TS != ts || !strings.Contains(string(u[0].URLs[ls.Links[0].URL]), "Printer") {
		t.Errorf("unfurls = %+v", u)
	}
}

// TestReactionAndShortcutEnvelopes delivers reaction_added and a message
// shortcut as slack-go reads them.
func TestReactionAndShortcutEnvelopes(t *testing.T) {
	t.Parallel()
	bob := slackfake.User{ID: "U0BOB", Name: "bob", Email: "bob@example.com"}
	srv := newFake(t, slackfake.WithUsers(alice, bob))
	c := startClient(t, srv, srv.AppToken())
	ctx := testCtx(t)
	ts, err := srv.UserMessage(alice.ID, "C0DESK", "VPN down", "")
	if err != nil {
		t.Fatal(err)
	}
	env, err := srv.ReactionAdded(ctx, bob.ID, "C0DESK", ts, ":ticket:")
	if err != nil {
		t.Fatal(err)
	}
	evt, n := c.waitEvent(t, 0, isEnvelope(env.ID))
	ev, _ := evt.Data.(slackevents.EventsAPIEvent)
	ra, ok := ev.InnerEvent.Data.(*slackevents.ReactionAddedEvent)
	if !ok || ra.User != bob.ID || ra.Reaction != "ticket" || ra.ItemUser != alice.ID || ra.Item.Channel != "C0DESK" || ra.Item.Timestamp != ts {
		t.Fatalf("reaction_added = %+v", ev.InnerEvent.Data)
	}
	env, err = srv.MessageShortcut(ctx, bob.ID, "C0DESK", ts, "create_ticket")
	if err != nil {
		t.Fatal(err)
	}
	evt, _ = c.waitEvent(t, n, isEnvelope(env.ID))
	cb, ok := evt.Data.(slack.InteractionCallback)
	if !ok || evt.Type != socketmode.EventTypeInteractive || cb.Type != slack.InteractionTypeMessageAction || cb.CallbackID != "create_ticket" ||
		cb.Message.Text != "VPN down" || cb.Message.User != alice.ID || cb.MessageTs != ts || cb.Channel.ID != "C0DESK" || cb.TriggerID == "" || cb.User.ID != bob.ID {
		t.Fatalf("shortcut = %+v", cb)
	}
	// The reaction is on the message, as conversations.replies shows it.
	msgs, _, _, err := webClient(srv, srv.BotToken()).GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C0DESK", Timestamp: ts})
	if b, _ := json.Marshal(msgs); err != nil || !strings.Contains(string(b), `"name":"ticket","count":1,"users":["U0BOB"]`) {
		t.Errorf("message = %s, %v", b, err)
	}
	if _, err := srv.ReactionAdded(ctx, bob.ID, "C0DESK", "1.1", "ticket"); err == nil {
		t.Error("a reaction to no message was delivered")
	}
}

// TestComposerUnfurl unfurls a link still in the composer by unfurl_id
// and source, as slack-go's UnfurlMessageByID sends them.
func TestComposerUnfurl(t *testing.T) {
	t.Parallel()
	srv, c, ctx := aliceClient(t)
	const link = "https://desk.example.com/a/tickets/7"
	env, id, err := srv.LinkSharedInComposer(ctx, alice.ID, link)
	if err != nil {
		t.Fatal(err)
	}
	evt, _ := c.waitEvent(t, 0, isEnvelope(env.ID))
	ev, _ := evt.Data.(slackevents.EventsAPIEvent)
	if ls, ok := ev.InnerEvent.Data.(*slackevents.LinkSharedEvent); !ok || ls.Channel != "COMPOSER" || ls.Links[0].URL != link {
		t.Fatalf("link_shared = %+v", ev.InnerEvent.Data)
	}
	api := webClient(srv, srv.BotToken())
	card := map[string]slack.Attachment{link: {Text: "ticket 7"}}
	if _, _, _, err := api.UnfurlMessageByIDContext(ctx, "nope", "composer", card); err == nil || err.Error() != "invalid_unfurl_id" {
		t.Errorf("unknown unfurl_id: %v", err)
	}
	if _, _, _, err := api.UnfurlMessageByIDContext(ctx, id, "elsewhere", card); err == nil || err.Error() != "invalid_source" {
		t.Errorf("bad source: %v", err)
	}
	if _, _, _, err := api.UnfurlMessageByIDContext(ctx, id, "composer", card); err != nil {
		t.Fatal(err)
	}
	if u := srv.Unfurls(); len(u) != 1 || u[0].UnfurlID != id || u[0].URLs[link] == nil {
		t.Errorf("unfurls = %+v", u)
	}
}
