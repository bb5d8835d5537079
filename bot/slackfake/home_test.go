package slackfake_test

import (
	"slices"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/deskbot/deskbot/bot/slackfake"
)

func homeRequest(text string) slack.HomeTabViewRequest {
	return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil),
	}}}
}

// TestViewsPublishKeepsOneHomePerUser: views.publish creates a user's Home
// view and replaces it on the next publish under the same id with a new
// hash; a stale hash, an unknown user, a view that is not a home and one
// over Slack's 100 blocks are refused as Slack refuses them.
func TestViewsPublishKeepsOneHomePerUser(t *testing.T) {
	srv := newFake(t, slackfake.WithUsers(alice))
	api := webClient(srv, srv.BotToken())
	first, err := api.PublishView(alice.ID, homeRequest("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	if first.Type != slack.VTHomeTab || first.ID == "" || first.Hash == "" {
		t.Fatalf("published %+v", first.View)
	}
	second, err := api.PublishView(alice.ID, homeRequest("two"), first.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != first.ID || second.Hash == first.Hash {
		t.Errorf("republish: id %s→%s hash %s→%s", first.ID, second.ID, first.Hash, second.Hash)
	}
	if v, ok := srv.HomeView(alice.ID); !ok || v.Method != "views.publish" || v.Hash != second.Hash {
		t.Errorf("HomeView %+v %v", v, ok)
	}
	_, err = api.PublishView(alice.ID, homeRequest("three"), first.Hash)
	if got := slackErr(err); got != slackfake.ErrHashConflict {
		t.Errorf("stale hash: %q", got)
	}
	if _, err := api.PublishView("U0NOBODY", homeRequest("x"), ""); slackErr(err) != slackfake.ErrInvalidArguments {
		t.Errorf("unknown user: %v", err)
	}
	big := homeRequest("x")
	big.Blocks.BlockSet = slices.Repeat(big.Blocks.BlockSet, 101)
	if _, err := api.PublishView(alice.ID, big, ""); slackErr(err) != slackfake.ErrInvalidArguments {
		t.Errorf("101 blocks: %v", err)
	}
	big.Blocks.BlockSet = big.Blocks.BlockSet[:100]
	if _, err := api.PublishView(alice.ID, big, ""); err != nil {
		t.Errorf("100 blocks: %v", err)
	}
	modal := slack.HomeTabViewRequest{Type: slack.VTModal, Blocks: big.Blocks}
	if _, err := api.PublishView(alice.ID, modal, ""); slackErr(err) != slackfake.ErrInvalidArguments {
		t.Errorf("a modal published: %v", err)
	}
}

// TestAppHomeOpenedArrives: the app_home_opened envelope decodes in
// slack-go's socketmode as an events_api event with an AppHomeOpenedEvent
// carrying the user, tab and the Home view last published for them.
func TestAppHomeOpenedArrives(t *testing.T) {
	srv := newFake(t, slackfake.WithUsers(alice))
	ctx := testCtx(t)
	c := startClient(t, srv, srv.AppToken())
	pub, err := webClient(srv, srv.BotToken()).PublishView(alice.ID, homeRequest("hello"), "")
	if err != nil {
		t.Fatal(err)
	}
	env, err := srv.AppHomeOpened(ctx, alice.ID, "home")
	if err != nil {
		t.Fatal(err)
	}
	evt, _ := c.waitEvent(t, 0, isEnvelope(env.ID))
	if evt.Type != socketmode.EventTypeEventsAPI {
		t.Fatalf("event type %s", evt.Type)
	}
	api, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || api.Type != slackevents.CallbackEvent || api.TeamID != srv.TeamID() {
		t.Fatalf("data %#v", evt.Data)
	}
	ev, ok := api.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent)
	if !ok {
		t.Fatalf("inner %#v", api.InnerEvent.Data)
	}
	if ev.User != alice.ID || ev.Tab != "home" || ev.Channel == "" || ev.View == nil || ev.View.ID != pub.ID || ev.View.Type != slack.VTHomeTab {
		t.Errorf("event %+v view %+v", ev, ev.View)
	}
	c.sm.Ack(*evt.Request)
	if _, err := env.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
}
