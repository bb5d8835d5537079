package slackfake_test

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
)

func TestPushAndUpdateViews(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(alice))
	c := startClient(t, srv, srv.AppToken())
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())
	modal := func(callback, title string) slack.ModalViewRequest {
		return slack.ModalViewRequest{Type: slack.VTModal, CallbackID: callback, ExternalID: "",
			Title: slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
			Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewActionBlock("more",
				slack.NewButtonBlockElement("details", "42", slack.NewTextBlockObject(slack.PlainTextType, "Details", false, false)))}}}
	}

	cmd, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 42", UserID: alice.ID, ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := api.OpenViewContext(ctx, cmd.TriggerID, modal("show", "Ticket 42"))
	if err != nil {
		t.Fatal(err)
	}

	// A button inside the modal: container "view", a trigger to push with.
	click, err := srv.BlockAction(ctx, alice.ID, "", "", "details", "42", slackfake.WithViewID(root.View.ID))
	if err != nil {
		t.Fatal(err)
	}
	evt, _ := c.waitEvent(t, 0, isEnvelope(click.ID))
	cb := evt.Data.(slack.InteractionCallback)
	if cb.Container.Type != "view" || cb.Container.ViewID != root.View.ID || cb.View.ID != root.View.ID ||
		cb.ActionCallback.BlockActions[0].BlockID != "more" || cb.ResponseURL != "" {
		t.Errorf("in-view action: container %+v view %s block %s response_url %q",
			cb.Container, cb.View.ID, cb.ActionCallback.BlockActions[0].BlockID, cb.ResponseURL)
	}
	_ = c.sm.Ack(*evt.Request)
	pushed, err := api.PushViewContext(ctx, cb.TriggerID, modal("details", "Details"))
	if err != nil {
		t.Fatal(err)
	}
	if pushed.View.RootViewID != root.View.ID || pushed.View.PreviousViewID != root.View.ID || pushed.View.ID == root.View.ID {
		t.Errorf("pushed view root %s previous %s id %s, want stacked on %s",
			pushed.View.RootViewID, pushed.View.PreviousViewID, pushed.View.ID, root.View.ID)
	}

	tests := []struct {
		name, hash, viewID, want string
	}{
		{"stale hash", "1.stale", root.View.ID, slackfake.ErrHashConflict},
		{"unknown view", "", "V0NOPE", slackfake.ErrViewNotFound},
		{"current hash", root.View.Hash, root.View.ID, ""},
	}
	for _, tc := range tests {
		resp, err := api.UpdateViewContext(ctx, modal("show", "Ticket 42 (resolved)"), "", tc.hash, tc.viewID)
		if slackErr(err) != tc.want || (tc.want == "" && err != nil) {
			t.Errorf("%s: views.update error %v, want %q", tc.name, err, tc.want)
			continue
		}
		if tc.want == "" && (resp.View.Title.Text != "Ticket 42 (resolved)" || resp.View.Hash == root.View.Hash) {
			t.Errorf("%s: updated view title %q hash %s", tc.name, resp.View.Title.Text, resp.View.Hash)
		}
	}
	var methods []string
	for _, v := range srv.Views() {
		methods = append(methods, v.Method)
	}
	if got := len(methods); got != 3 || methods[0] != "views.open" || methods[1] != "views.push" || methods[2] != "views.update" {
		t.Errorf("view log = %v", methods)
	}
}
