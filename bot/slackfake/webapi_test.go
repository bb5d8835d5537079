package slackfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

func TestPostUpdateDeleteAndHistory(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithChannels(slackfake.Channel{ID: "C0ONCALL", Name: "it-oncall"}))
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())

	btn := slack.NewButtonBlockElement("ack", "42", slack.NewTextBlockObject(slack.PlainTextType, "Acknowledge", false, false))
	ch, ts1, err := api.PostMessageContext(ctx, "#it-oncall", slack.MsgOptionText("Urgent #42", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("b1", btn)))
	if err != nil {
		t.Fatal(err)
	}
	if ch != "C0ONCALL" {
		t.Errorf("channel %q, want the name resolved to C0ONCALL", ch)
	}
	_, reply, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("paged", false), slack.MsgOptionTS(ts1))
	if err != nil {
		t.Fatal(err)
	}
	_, ts2, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("Urgent #43", false))
	if err != nil {
		t.Fatal(err)
	}
	if !tsLess(ts1, reply) || !tsLess(reply, ts2) {
		t.Errorf("timestamps not increasing: %s %s %s", ts1, reply, ts2)
	}
	if _, _, err := api.PostMessageContext(ctx, "#nowhere", slack.MsgOptionText("x", false)); slackErr(err) != slackfake.ErrChannelNotFound {
		t.Errorf("post to unknown channel name: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, ch); slackErr(err) != slackfake.ErrNoText {
		t.Errorf("post without text: %v", err)
	}

	_, _, text, err := api.UpdateMessageContext(ctx, ch, ts1, slack.MsgOptionText("Urgent #42 (acked by alice)", false))
	if err != nil || text != "Urgent #42 (acked by alice)" {
		t.Fatalf("update: %q %v", text, err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, "1.000001", slack.MsgOptionText("x", false)); slackErr(err) != slackfake.ErrMessageNotFound {
		t.Errorf("update unknown ts: %v", err)
	}
	ets, err := api.PostEphemeralContext(ctx, ch, "U0ALICE", slack.MsgOptionText("only you", false))
	if err != nil || ets == "" {
		t.Fatalf("ephemeral: %q %v", ets, err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, ch, ts2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, ch, ts2); slackErr(err) != slackfake.ErrMessageNotFound {
		t.Errorf("second delete: %v", err)
	}

	msgs := srv.Messages()
	if len(msgs) != 6 {
		t.Fatalf("%d messages recorded, want 6: %+v", len(msgs), msgs)
	}
	first := msgs[0]
	var blocks []map[string]any
	if err := json.Unmarshal(first.Blocks, &blocks); err != nil || len(blocks) != 1 || blocks[0]["block_id"] != "b1" {
		t.Errorf("posted blocks %s (%v)", first.Blocks, err)
	}
	if msgs[1].ThreadTS != ts1 || msgs[1].TS != reply {
		t.Errorf("thread reply recorded as %+v", msgs[1])
	}
	if m := msgs[3]; !m.Updated || m.TS != ts1 || m.Text != "Urgent #42 (acked by alice)" || m.Blocks == nil {
		t.Errorf("update recorded as %+v (blocks must survive a text-only update)", m)
	}
	if m := msgs[4]; !m.Ephemeral || m.User != "U0ALICE" || m.TS != ets {
		t.Errorf("ephemeral recorded as %+v", m)
	}
	if m := msgs[5]; !m.Deleted || m.TS != ts2 {
		t.Errorf("delete recorded as %+v", m)
	}

	// History: newest first, top-level only, without deleted or ephemeral messages.
	_, ts3, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("Urgent #44", false))
	if err != nil {
		t.Fatal(err)
	}
	hist, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: ch})
	if err != nil {
		t.Fatal(err)
	}
	if got := tsList(hist.Messages); got != ts3+" "+ts1 || hist.HasMore {
		t.Errorf("history = %s (has_more %v), want %s %s", got, hist.HasMore, ts3, ts1)
	}
	if m := hist.Messages[1]; m.Text != "Urgent #42 (acked by alice)" || m.Edited == nil || m.BotID != slackfake.DefaultBotID || len(m.Blocks.BlockSet) != 1 {
		t.Errorf("history message = %+v", m.Msg)
	}
	limited, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: ch, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := tsList(limited.Messages); got != ts3 || !limited.HasMore {
		t.Errorf("limit 1 history = %s (has_more %v)", got, limited.HasMore)
	}
}

func tsLess(a, b string) bool {
	x, _ := strconv.ParseFloat(a, 64)
	y, _ := strconv.ParseFloat(b, 64)
	return x < y
}

func tsList(ms []slack.Message) string {
	var ts []string
	for _, m := range ms {
		ts = append(ts, m.Timestamp)
	}
	return strings.Join(ts, " ")
}

func TestUsersAuthAndConversations(t *testing.T) {
	t.Parallel()
	noMail := slackfake.User{ID: "U0BOB", Name: "bob", RealName: "Bob"}
	srv := newFake(t, slackfake.WithUsers(alice, noMail))
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())

	u, err := api.GetUserInfoContext(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Profile.Email != alice.Email || u.RealName != alice.RealName || u.Name != "alice" || u.TeamID != slackfake.DefaultTeamID {
		t.Errorf("users.info = %+v", u)
	}
	if u, err := api.GetUserInfoContext(ctx, noMail.ID); err != nil || u.Profile.Email != "" {
		t.Errorf("user without e-mail: %+v %v", u, err)
	}
	if _, err := api.GetUserInfoContext(ctx, "U0NOBODY"); slackErr(err) != slackfake.ErrUserNotFound {
		t.Errorf("unknown user: %v", err)
	}
	if u, err := api.GetUserByEmailContext(ctx, "Alice@Example.com"); err != nil || u.ID != alice.ID {
		t.Errorf("lookupByEmail: %+v %v", u, err)
	}
	if _, err := api.GetUserByEmailContext(ctx, "nobody@example.com"); slackErr(err) != slackfake.ErrUsersNotFound {
		t.Errorf("lookupByEmail unknown: %v", err)
	}
	// A direct message to a user id nobody of the workspace has fails as
	// on Slack, instead of landing in a DM with nobody.
	if _, _, err := api.PostMessageContext(ctx, "U0NOBODY", slack.MsgOptionText("hi", false)); slackErr(err) != slackfake.ErrChannelNotFound {
		t.Errorf("DM to an unknown user: %v", err)
	}

	at, err := api.AuthTestContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if at.TeamID != slackfake.DefaultTeamID || at.UserID != slackfake.DefaultBotUser || at.BotID != slackfake.DefaultBotID {
		t.Errorf("auth.test = %+v", at)
	}

	ch, noOp, already, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{alice.ID}})
	if err != nil || ch.ID != "D"+alice.ID || noOp || already {
		t.Errorf("conversations.open = %+v %v %v %v", ch, noOp, already, err)
	}
	if _, _, already, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{alice.ID}}); err != nil || !already {
		t.Errorf("second conversations.open: already_open %v, %v", already, err)
	}
	if _, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U0NOBODY"}}); slackErr(err) != slackfake.ErrUserNotFound {
		t.Errorf("conversations.open unknown user: %v", err)
	}
	if dm, _, err := api.PostMessageContext(ctx, ch.ID, slack.MsgOptionText("hi", false)); err != nil || dm != ch.ID {
		t.Errorf("post to DM: %q %v", dm, err)
	}
}

func TestTokensAreCheckedAndRedacted(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(alice))
	ctx := testCtx(t)

	tests := []struct {
		name  string
		token string
		want  string
	}{
		{"wrong bot token", "xoxb-wrong", slackfake.ErrInvalidAuth},
		{"no token", "", slackfake.ErrNotAuthed},
		{"app token for a bot method", srv.AppToken(), slackfake.ErrNotAllowedTokenType},
	}
	for _, tc := range tests {
		api := webClient(srv, tc.token)
		if _, err := api.AuthTestContext(ctx); slackErr(err) != tc.want {
			t.Errorf("%s: auth.test error %v, want %s", tc.name, err, tc.want)
		}
		if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); slackErr(err) != tc.want {
			t.Errorf("%s: chat.postMessage error %v, want %s", tc.name, err, tc.want)
		}
		if _, err := api.OpenViewContext(ctx, "1.2.3", slack.ModalViewRequest{Type: slack.VTModal}); slackErr(err) != tc.want {
			t.Errorf("%s: views.open (JSON, Bearer) error %v, want %s", tc.name, err, tc.want)
		}
	}
	if _, _, err := webClient(srv, srv.BotToken()).PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Fatal(err)
	}
	for _, c := range srv.Calls() {
		all, _ := json.Marshal(c)
		if strings.Contains(string(all), srv.BotToken()) || strings.Contains(string(all), srv.AppToken()) {
			t.Errorf("call record leaks a token: %s", all)
		}
	}
	last := srv.Calls()[len(srv.Calls())-1]
	if last.Method != "chat.postMessage" || last.Form.Get("token") != "REDACTED" || last.Form.Get("text") != "x" || last.Error != "" {
		t.Errorf("last call = %+v", last)
	}
}

func TestUnknownMethodIsReported(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	api := webClient(srv, srv.BotToken())
	_, err := api.GetConversationInfoContext(testCtx(t), &slack.GetConversationInfoInput{ChannelID: "C1"})
	if slackErr(err) != slackfake.ErrUnknownMethod {
		t.Errorf("conversations.info error %v, want unknown_method", err)
	}
	if got := srv.UnknownMethods(); len(got) != 1 || got[0] != "conversations.info" {
		t.Errorf("UnknownMethods() = %v", got)
	}
}

func TestFaultInjection(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())

	srv.RateLimitNext("chat.postMessage", 1, 1500*time.Millisecond)
	srv.FailNext("chat.postMessage", 1, "channel_is_archived")
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	if rl, ok := errors.AsType[*slack.RateLimitedError](err); !ok || rl.RetryAfter != 2*time.Second {
		t.Errorf("first call: %v, want rate limited for 2s", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); slackErr(err) != "channel_is_archived" {
		t.Errorf("second call: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("third call: %v", err)
	}
	if got := len(srv.Messages()); got != 1 {
		t.Errorf("%d messages recorded, want only the successful one", got)
	}
	if calls := srv.Calls(); len(calls) != 3 || calls[0].Status != http.StatusTooManyRequests {
		t.Errorf("calls = %+v", calls)
	}
	srv.Reset()
	if len(srv.Calls())+len(srv.Messages()) != 0 {
		t.Error("Reset left records behind")
	}
}

func TestResponseURL(t *testing.T) {
	t.Parallel()
	srv, _, ctx := aliceClient(t)
	api := webClient(srv, srv.BotToken())

	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("Ticket 42: open", false))
	if err != nil {
		t.Fatal(err)
	}
	click, err := srv.BlockAction(ctx, alice.ID, "C1", ts, "resolve", "42", slackfake.WithBlockID("b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(click.ResponseURL),
		slack.MsgOptionText("Ticket 42: resolved", false)); err != nil {
		t.Fatal(err)
	}
	cmd, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 1", UserID: alice.ID, ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral),
		slack.MsgOptionText("Ticket 1 is open", false)); err != nil {
		t.Fatal(err)
	}
	r, err := srv.WaitResponse(ctx, func(r slackfake.Response) bool { return r.EnvelopeID == cmd.ID })
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Ticket 1 is open" || r.ResponseType != "ephemeral" || r.ReplaceOriginal || r.URL != cmd.ResponseURL {
		t.Errorf("slash command response = %+v", r)
	}
	resps := srv.Responses()
	if len(resps) != 2 || !resps[0].ReplaceOriginal || resps[0].EnvelopeID != click.ID {
		t.Errorf("responses = %+v", resps)
	}
	if h := srv.History("C1"); len(h) != 1 || h[0].Text != "Ticket 42: resolved" {
		t.Errorf("history after replace_original = %+v", h)
	}
	// Slack accepts five posts per response_url.
	for i := range 5 {
		_, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral),
			slack.MsgOptionText("again", false))
		if wantErr := i == 4; (err != nil) != wantErr {
			t.Errorf("post %d to the response_url: %v", i+2, err)
		}
	}
}

// TestRawSocketProtocol checks the frames themselves with a plain
// websocket client: one-time tickets, hello first, pings, dropped
// oversized acks.
func TestRawSocketProtocol(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithPingInterval(20*time.Millisecond))
	ctx := testCtx(t)

	open := func(token string) (string, map[string]any) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.APIURL()+"apps.connections.open", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		u, _ := body["url"].(string)
		return u, body
	}
	if _, body := open(srv.BotToken()); body["ok"] != false || body["error"] != slackfake.ErrNotAllowedTokenType {
		t.Errorf("apps.connections.open with a bot token = %v", body)
	}
	wsURL, _ := open(srv.AppToken())
	hdr := http.Header{"Origin": {"https://api.slack.com"}}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, resp, err := websocket.DefaultDialer.DialContext(ctx, wsURL, hdr); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second dial with the same ticket: %v", err)
	}
	pings := make(chan struct{}, 100)
	conn.SetPingHandler(func(string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		return nil
	})
	var hello map[string]any
	if err := conn.ReadJSON(&hello); err != nil || hello["type"] != "hello" {
		t.Fatalf("first frame = %v (%v), want hello", hello, err)
	}
	frames := make(chan map[string]any, 10)
	go func() {
		for {
			var f map[string]any
			if err := conn.ReadJSON(&f); err != nil {
				close(frames)
				return
			}
			frames <- f
		}
	}()
	select {
	case <-pings:
	case <-ctx.Done():
		t.Fatal("no ping from the fake")
	}

	env, err := srv.Send(ctx, "events_api", map[string]any{"type": "event_callback", "event_id": "Ev1"})
	if err != nil {
		t.Fatal(err)
	}
	f := <-frames
	if f["envelope_id"] != env.ID || f["type"] != "events_api" || f["accepts_response_payload"] != false {
		t.Errorf("envelope frame = %v", f)
	}
	big, _ := json.Marshal(map[string]any{"envelope_id": env.ID, "payload": map[string]string{"text": strings.Repeat("x", slackfake.MaxAckSize)}})
	if err := conn.WriteMessage(websocket.TextMessage, big); err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteJSON(map[string]any{"envelope_id": env.ID}); err != nil {
		t.Fatal(err)
	}
	ack, err := env.WaitAck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Payload != nil || ack.Dropped {
		t.Errorf("WaitAck returned %+v, want the small ack, not the dropped one", ack)
	}
	if acks := srv.Acks(); len(acks) != 2 || !acks[0].Dropped || acks[0].Size < slackfake.MaxAckSize {
		t.Errorf("acks = %+v, want the oversized one recorded as dropped", acks)
	}

	srv.Disconnect()
	f, ok := <-frames
	if !ok || f["type"] != "disconnect" || f["reason"] != "refresh_requested" {
		t.Errorf("after Disconnect: frame %v (open %v), want a disconnect frame", f, ok)
	}
	if _, ok := <-frames; ok {
		t.Error("socket stayed open after the disconnect frame")
	}
}

func TestUserGroupsList(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUserGroups(
		slackfake.UserGroup{ID: "S0ONCALL", Handle: "@it-oncall", Name: "IT on call", Users: []string{"U0ALICE", "U0BOB"}},
		slackfake.UserGroup{ID: "S0OLD", Handle: "old-team", Name: "Old team", Disabled: true},
	))
	srv.AddUserGroup(slackfake.UserGroup{ID: "S0NET", Handle: "network", Name: "Network"})
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())

	gs, err := api.GetUserGroupsContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gs {
		got = append(got, g.ID+" @"+g.Handle+" "+g.Name+" "+strconv.Itoa(len(g.Users)))
	}
	if want := []string{"S0NET @network Network 0", "S0ONCALL @it-oncall IT on call 0"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("usergroups.list = %q, want %q (sorted by id, no disabled group, no members unless asked)", got, want)
	}
	gs, err = api.GetUserGroupsContext(ctx, slack.GetUserGroupsOptionIncludeUsers(true), slack.GetUserGroupsOptionIncludeDisabled(true))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 3 || gs[2].ID != "S0ONCALL" || strings.Join(gs[2].Users, ",") != "U0ALICE,U0BOB" || gs[1].ID != "S0OLD" || gs[1].DateDelete == 0 {
		t.Errorf("usergroups.list with users and disabled = %+v", gs)
	}
	if _, err := webClient(srv, "xoxb-wrong").GetUserGroupsContext(ctx); slackErr(err) != slackfake.ErrInvalidAuth {
		t.Errorf("usergroups.list with a wrong token: %v", err)
	}
	if _, err := webClient(srv, srv.AppToken()).GetUserGroupsContext(ctx); slackErr(err) != slackfake.ErrNotAllowedTokenType {
		t.Errorf("usergroups.list with the app token: %v", err)
	}
	var calls int
	for _, c := range srv.Calls() {
		if c.Method == "usergroups.list" {
			calls++
			if c.Form.Get("token") != "" && c.Form.Get("token") != "REDACTED" {
				t.Errorf("token recorded: %+v", c.Form)
			}
		}
	}
	if calls != 4 {
		t.Errorf("%d usergroups.list calls recorded, want 4", calls)
	}
}

func TestPushAndUpdateViews(t *testing.T) {
	t.Parallel()
	srv, c, ctx := aliceClient(t)
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

// TestBlockKitLimitsEnforced: like Slack, the fake refuses a message whose
// blocks break a Block Kit limit (invalid_blocks) or whose text is over
// 40,000 characters (msg_too_long), on every way in, so that the bot's
// end-to-end tests catch a card Slack would refuse.
func TestBlockKitLimitsEnforced(t *testing.T) {
	t.Parallel()
	srv, _, ctx := aliceClient(t)
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
