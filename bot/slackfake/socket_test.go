package slackfake_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/deskbot/deskbot/bot/slackfake"
)

var alice = slackfake.User{ID: "U0ALICE", Name: "alice", RealName: "Alice Liddell", Email: "alice@example.com"}

func TestSocketModeConnectsAndReceivesHello(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	c := startClient(t, srv, srv.AppToken())

	connected, _ := c.waitEvent(t, 0, isType(socketmode.EventTypeConnected))
	if ce := connected.Data.(*socketmode.ConnectedEvent); ce.ConnectionCount != 0 || !strings.HasPrefix(ce.Info.URL, "ws://") {
		t.Errorf("connected event = %+v (url %q), want first connection to a ws:// URL", ce, ce.Info.URL)
	}
	hello, _ := c.waitEvent(t, 0, isType(socketmode.EventTypeHello))
	if hello.Request.NumConnections != 1 || hello.Request.ConnectionInfo.AppID != slackfake.DefaultAppID {
		t.Errorf("hello = %+v, want num_connections 1 and app id %s", hello.Request, slackfake.DefaultAppID)
	}
	if err := srv.WaitConnected(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if got := srv.Connections(); got != 1 {
		t.Errorf("Connections() = %d, want 1", got)
	}
}

func TestSlashCommandArrivesAndAckIsSeen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload any
		want    string // JSON of the ack payload, "" for none
	}{
		{name: "empty ack"},
		{name: "ack with message", payload: map[string]any{"response_type": "ephemeral", "text": "usage: /ticket new TITLE"},
			want: `{"response_type":"ephemeral","text":"usage: /ticket new TITLE"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, slackfake.WithUsers(alice), slackfake.WithChannels(slackfake.Channel{ID: "C0DESK", Name: "it-desk"}))
			c := startClient(t, srv, srv.AppToken())
			ctx := testCtx(t)

			env, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "note 42 rebooted", UserID: alice.ID, ChannelID: "C0DESK"})
			if err != nil {
				t.Fatal(err)
			}
			evt, _ := c.waitEvent(t, 0, isType(socketmode.EventTypeSlashCommand))
			cmd := evt.Data.(slack.SlashCommand)
			want := slack.SlashCommand{
				Token: "fake-verification-token", TeamID: slackfake.DefaultTeamID, TeamDomain: "fake",
				ChannelID: "C0DESK", ChannelName: "it-desk", UserID: alice.ID, UserName: "alice",
				Command: "/ticket", Text: "note 42 rebooted", ResponseURL: env.ResponseURL, TriggerID: env.TriggerID,
				APIAppID: slackfake.DefaultAppID,
			}
			if cmd != want {
				t.Errorf("slash command =\n%+v\nwant\n%+v", cmd, want)
			}
			if !strings.HasPrefix(cmd.ResponseURL, srv.URL+"/response/") || cmd.TriggerID == "" {
				t.Errorf("response_url %q / trigger_id %q not handed out", cmd.ResponseURL, cmd.TriggerID)
			}
			if evt.Request.EnvelopeID != env.ID || !evt.Request.AcceptsResponsePayload || evt.Request.RetryAttempt != 0 {
				t.Errorf("request = %+v, want envelope %s accepting a response payload", evt.Request, env.ID)
			}

			if tc.payload == nil {
				err = c.sm.Ack(*evt.Request)
			} else {
				err = c.sm.Ack(*evt.Request, tc.payload)
			}
			if err != nil {
				t.Fatal(err)
			}
			ack, err := env.WaitAck(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ack.EnvelopeID != env.ID || string(ack.Payload) != tc.want {
				t.Errorf("ack = %s %s, want %s %s", ack.EnvelopeID, ack.Payload, env.ID, tc.want)
			}
			if ack.Latency <= 0 || ack.Latency > waitTimeout {
				t.Errorf("ack latency %v out of range", ack.Latency)
			}
		})
	}
}

func TestBlockActionCarriesTheClickedElement(t *testing.T) {
	t.Parallel()
	srv, c, ctx := aliceClient(t)
	api := webClient(srv, srv.BotToken())

	claim := slack.NewButtonBlockElement("claim", "ticket-42", slack.NewTextBlockObject(slack.PlainTextType, "Claim", false, false))
	prio := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, "priority",
		slack.NewOptionBlockObject("3", slack.NewTextBlockObject(slack.PlainTextType, "High", false, false), nil),
		slack.NewOptionBlockObject("4", slack.NewTextBlockObject(slack.PlainTextType, "Urgent", false, false), nil))
	ch, ts, err := api.PostMessageContext(ctx, "C0ONCALL", slack.MsgOptionText("Ticket 42", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("alert-42", claim, prio)))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		actionID, value string
		check           func(t *testing.T, a *slack.BlockAction)
	}{
		{"claim", "ticket-42", func(t *testing.T, a *slack.BlockAction) {
			if a.Type != "button" || a.Value != "ticket-42" || a.Text.Text != "Claim" {
				t.Errorf("button action = %+v", a)
			}
		}},
		{"priority", "4", func(t *testing.T, a *slack.BlockAction) {
			if a.Type != "static_select" || a.SelectedOption.Value != "4" || a.SelectedOption.Text.Text != "Urgent" {
				t.Errorf("select action = %+v", a)
			}
		}},
	}
	for _, tc := range tests {
		env, err := srv.BlockAction(ctx, alice.ID, ch, ts, tc.actionID, tc.value)
		if err != nil {
			t.Fatal(err)
		}
		evt, _ := c.waitEvent(t, 0, isEnvelope(env.ID))
		if evt.Type != socketmode.EventTypeInteractive {
			t.Fatalf("event type %s, want interactive", evt.Type)
		}
		cb := evt.Data.(slack.InteractionCallback)
		if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 {
			t.Fatalf("callback type %q with %d block actions", cb.Type, len(cb.ActionCallback.BlockActions))
		}
		a := cb.ActionCallback.BlockActions[0]
		if a.ActionID != tc.actionID || a.BlockID != "alert-42" {
			t.Errorf("action id/block id = %s/%s, want %s/alert-42", a.ActionID, a.BlockID, tc.actionID)
		}
		tc.check(t, a)
		if cb.User.ID != alice.ID || cb.User.Name != "alice" || cb.Channel.ID != ch || cb.Container.MessageTs != ts ||
			cb.Message.Timestamp != ts || cb.Message.Text != "Ticket 42" || cb.TriggerID != env.TriggerID ||
			cb.ResponseURL != env.ResponseURL || cb.Team.ID != slackfake.DefaultTeamID || cb.APIAppID != slackfake.DefaultAppID {
			t.Errorf("callback context wrong: user %+v channel %s container %+v message %s/%q trigger %q response_url %q",
				cb.User.ID, cb.Channel.ID, cb.Container, cb.Message.Timestamp, cb.Message.Text, cb.TriggerID, cb.ResponseURL)
		}
		if evt.Request.AcceptsResponsePayload {
			t.Error("block_actions envelopes do not accept a response payload")
		}
		if err := c.sm.Ack(*evt.Request); err != nil {
			t.Fatal(err)
		}
		if _, err := env.WaitAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestModalRoundTripThroughHandler drives a SocketmodeHandler app: the
// slash command opens a modal, the submission is validated with field
// errors in the ack.
func TestModalRoundTripThroughHandler(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(alice))
	ctx := testCtx(t)
	api := slack.New(srv.BotToken(), slack.OptionAppLevelToken(srv.AppToken()), slack.OptionAPIURL(srv.APIURL()))
	sm := socketmode.New(api)
	h := socketmode.NewSocketmodeHandler(sm)
	h.HandleDefault(func(*socketmode.Event, *socketmode.Client) {})
	openErr := make(chan error, 1)
	submitted := make(chan slack.InteractionCallback, 1)
	h.HandleSlashCommand("/ticket", func(e *socketmode.Event, c *socketmode.Client) {
		cmd := e.Data.(slack.SlashCommand)
		_ = c.Ack(*e.Request)
		_, err := c.OpenViewContext(ctx, cmd.TriggerID, slack.ModalViewRequest{
			Type: slack.VTModal, CallbackID: "new_ticket", PrivateMetadata: "C0DESK",
			Title:  slack.NewTextBlockObject(slack.PlainTextType, "New ticket", false, false),
			Submit: slack.NewTextBlockObject(slack.PlainTextType, "Create", false, false),
			Blocks: slack.Blocks{BlockSet: []slack.Block{
				slack.NewInputBlock("title_block", slack.NewTextBlockObject(slack.PlainTextType, "Title", false, false), nil,
					slack.NewPlainTextInputBlockElement(nil, "title")),
				slack.NewInputBlock("prio_block", slack.NewTextBlockObject(slack.PlainTextType, "Priority", false, false), nil,
					slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, "prio",
						slack.NewOptionBlockObject("1", slack.NewTextBlockObject(slack.PlainTextType, "Low", false, false), nil),
						slack.NewOptionBlockObject("4", slack.NewTextBlockObject(slack.PlainTextType, "Urgent", false, false), nil))),
			}},
		})
		openErr <- err
	})
	h.HandleViewSubmission("new_ticket", func(e *socketmode.Event, c *socketmode.Client) {
		cb := e.Data.(slack.InteractionCallback)
		submitted <- cb
		_ = c.Ack(*e.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{"title_block": "Title is too short"}))
	})
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.RunEventLoopContext(runCtx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	if _, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "new", UserID: alice.ID, ChannelID: "C0DESK"}); err != nil {
		t.Fatal(err)
	}
	if err := <-openErr; err != nil {
		t.Fatalf("views.open: %v", err)
	}
	view, err := srv.WaitView(ctx, func(v slackfake.View) bool { return v.CallbackID == "new_ticket" })
	if err != nil {
		t.Fatal(err)
	}
	if view.Method != "views.open" || view.UserID != alice.ID || view.PrivateMetadata != "C0DESK" || view.ID == "" || view.RootViewID != view.ID {
		t.Errorf("recorded view = %+v", view)
	}

	env, err := srv.ViewSubmission(ctx, alice.ID, "new_ticket", "",
		map[string]map[string]string{"title_block": {"title": "x"}, "prio_block": {"prio": "4"}})
	if err != nil {
		t.Fatal(err)
	}
	cb := <-submitted
	if cb.Type != slack.InteractionTypeViewSubmission || cb.View.ID != view.ID || cb.View.CallbackID != "new_ticket" ||
		cb.View.PrivateMetadata != "C0DESK" || cb.View.Hash != view.Hash || cb.User.ID != alice.ID || cb.TriggerID == "" {
		t.Errorf("submission = type %s view %+v user %s", cb.Type, cb.View, cb.User.ID)
	}
	if got := cb.View.State.Values["title_block"]["title"]; got.Type != "plain_text_input" || got.Value != "x" {
		t.Errorf("title state = %+v", got)
	}
	if got := cb.View.State.Values["prio_block"]["prio"]; got.Type != "static_select" || got.SelectedOption.Value != "4" || got.SelectedOption.Text.Text != "Urgent" {
		t.Errorf("priority state = %+v", got)
	}
	if len(cb.View.Blocks.BlockSet) != 2 || cb.View.Title.Text != "New ticket" {
		t.Errorf("submitted view lost its blocks/title: %d blocks, title %+v", len(cb.View.Blocks.BlockSet), cb.View.Title)
	}
	ack, err := env.WaitAck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp slack.ViewSubmissionResponse
	if err := json.Unmarshal(ack.Payload, &resp); err != nil || resp.ResponseAction != slack.RAErrors || resp.Errors["title_block"] != "Title is too short" {
		t.Errorf("ack payload %s (%v), want response_action errors", ack.Payload, err)
	}
}

func TestOpenViewTriggerRules(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	srv := newFake(t, slackfake.WithUsers(alice), slackfake.WithClock(clk))
	startClient(t, srv, srv.AppToken())
	ctx := testCtx(t)
	api := webClient(srv, srv.BotToken())
	modal := slack.ModalViewRequest{Type: slack.VTModal, CallbackID: "m",
		Title: slack.NewTextBlockObject(slack.PlainTextType, "M", false, false)}
	newTrigger := func() string {
		env, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", UserID: alice.ID, ChannelID: "C1"})
		if err != nil {
			t.Fatal(err)
		}
		return env.TriggerID
	}

	fresh := newTrigger()
	if _, err := api.OpenViewContext(ctx, fresh, modal); err != nil {
		t.Fatalf("fresh trigger: %v", err)
	}
	expired := newTrigger()
	clk.Advance(slackfake.TriggerTTL + time.Millisecond)
	justInTime := newTrigger()
	clk.Advance(slackfake.TriggerTTL)

	tests := []struct {
		name, trigger, want string
	}{
		{"reused", fresh, slackfake.ErrTriggerExchanged},
		{"unknown", "123.456.deadbeef", slackfake.ErrInvalidTriggerID},
		{"expired", expired, slackfake.ErrExpiredTriggerID},
		{"at the limit", justInTime, ""},
	}
	for _, tc := range tests {
		resp, err := api.OpenViewContext(ctx, tc.trigger, modal)
		if got := slackErr(err); got != tc.want || (tc.want == "" && err != nil) {
			t.Errorf("%s trigger: error %v, want %q", tc.name, err, tc.want)
		}
		if tc.want == "" && (resp == nil || resp.View.ID == "" || resp.View.CallbackID != "m") {
			t.Errorf("%s trigger: view %+v", tc.name, resp)
		}
	}
	if got := len(srv.Views()); got != 2 {
		t.Errorf("%d views recorded, want the 2 that opened", got)
	}
}

func TestDisconnectMakesClientReconnect(t *testing.T) {
	t.Parallel()
	srv, c, ctx := aliceClient(t)
	_, first := c.waitEvent(t, 0, isType(socketmode.EventTypeConnected))
	// slack-go reports Connected once the websocket is dialled, which can
	// be before the fake has registered the connection.
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}

	srv.Disconnect()
	evt, _ := c.waitEvent(t, first+1, isType(socketmode.EventTypeConnected))
	if n := evt.Data.(*socketmode.ConnectedEvent).ConnectionCount; n != 1 {
		t.Errorf("ConnectionCount after reconnect = %d, want 1", n)
	}
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := srv.ConnectionsOpened(); got != 2 {
		t.Errorf("ConnectionsOpened = %d, want 2", got)
	}
	env, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", UserID: alice.ID, ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	c.waitEvent(t, 0, isEnvelope(env.ID))
}

// TestPingsKeepTheConnection watches a client whose ping timeout is short
// for several timeouts: with the fake's pings it never reconnects, with
// pings too rare it does (proving the observation can fail).
func TestPingsKeepTheConnection(t *testing.T) {
	t.Parallel()
	const clientTimeout = 300 * time.Millisecond
	tests := []struct {
		name          string
		ping          time.Duration
		wantReconnect bool
	}{
		{"fake pings", 50 * time.Millisecond, false},
		{"pings too rare", time.Hour, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, slackfake.WithPingInterval(tc.ping))
			c := startClient(t, srv, srv.AppToken(), socketmode.OptionPingInterval(clientTimeout))
			c.waitEvent(t, 0, isType(socketmode.EventTypeConnected))
			if tc.wantReconnect {
				c.waitEvent(t, 0, func(e socketmode.Event) bool {
					ce, ok := e.Data.(*socketmode.ConnectedEvent)
					return ok && ce.ConnectionCount >= 1
				})
				return
			}
			// The duration is the subject here: outlive the client's timeout 6 times.
			timer := time.NewTimer(6 * clientTimeout)
			defer timer.Stop()
			<-timer.C
			if n := c.count(isType(socketmode.EventTypeConnected)); n != 1 || srv.ConnectionsOpened() != 1 {
				t.Errorf("%d connected events, %d connections opened; want 1 and 1", n, srv.ConnectionsOpened())
			}
		})
	}
}

func TestRedeliverRepeatsTheEnvelope(t *testing.T) {
	t.Parallel()
	srv, c, ctx := aliceClient(t)

	env, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 7", UserID: alice.ID, ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	_, i := c.waitEvent(t, 0, isEnvelope(env.ID))
	again, err := srv.Redeliver(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	evt, _ := c.waitEvent(t, i+1, isEnvelope(env.ID))
	if evt.Request.RetryAttempt != 1 || evt.Request.RetryReason != "timeout" || again.ID != env.ID {
		t.Errorf("redelivery request = %+v", evt.Request)
	}
	if cmd := evt.Data.(slack.SlashCommand); cmd.Text != "show 7" || cmd.TriggerID != env.TriggerID {
		t.Errorf("redelivered payload = %+v", cmd)
	}
	if err := c.sm.Ack(*evt.Request); err != nil {
		t.Fatal(err)
	}
	if _, err := again.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestEnvelopesAreSpreadOverConnections(t *testing.T) {
	t.Parallel()
	srv := newFake(t, slackfake.WithUsers(alice))
	clients := []*client{startClient(t, srv, srv.AppToken()), startClient(t, srv, srv.AppToken())}
	ctx := testCtx(t)
	if err := srv.WaitConnected(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var envs []*slackfake.Envelope
	for range 4 {
		env, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", UserID: alice.ID, ChannelID: "C1"})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	for _, env := range envs {
		// Each envelope reaches exactly one client: wait until one has it.
		deadline := time.After(waitTimeout)
		for {
			more0, more1 := clients[0].changed(), clients[1].changed()
			if clients[0].count(isEnvelope(env.ID))+clients[1].count(isEnvelope(env.ID)) > 0 {
				break
			}
			select {
			case <-more0:
			case <-more1:
			case <-deadline:
				t.Fatalf("envelope %s never arrived", env.ID)
			}
		}
	}
	per := []int{clients[0].count(isType(socketmode.EventTypeSlashCommand)), clients[1].count(isType(socketmode.EventTypeSlashCommand))}
	if per[0]+per[1] != 4 || per[0] == 0 || per[1] == 0 {
		t.Errorf("slash commands per connection = %v, want 4 spread over both", per)
	}
}

func TestWrongAppTokenIsFatalForSocketMode(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	api := slack.New(srv.BotToken(), slack.OptionAppLevelToken("xapp-wrong"), slack.OptionAPIURL(srv.APIURL()))
	sm := socketmode.New(api)
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(ctx) }()
	go func() { // drain events so the client never blocks
		for {
			select {
			case <-sm.Events:
			case <-ctx.Done():
				return
			}
		}
	}()
	select {
	case err := <-errc:
		if slackErr(err) != slackfake.ErrInvalidAuth {
			t.Errorf("RunContext error = %v, want invalid_auth", err)
		}
	case <-ctx.Done():
		t.Fatal("RunContext kept running with a wrong app token")
	}
	if srv.ConnectionsOpened() != 0 {
		t.Error("a websocket was opened with a wrong app token")
	}
}

// TestEventsAPIEnvelopeAndAckLimit delivers an events_api envelope and
// shows slack-go refusing an ack past the 20 KiB limit.
func TestEventsAPIEnvelopeAndAckLimit(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	c := startClient(t, srv, srv.AppToken())
	ctx := testCtx(t)
	env, err := srv.Send(ctx, "events_api", map[string]any{"type": "event_callback", "event_id": "Ev1",
		"event": map[string]any{"type": "app_mention", "text": "hi", "user": "U1", "channel": "C1", "ts": "1.2"}})
	if err != nil {
		t.Fatal(err)
	}
	evt, _ := c.waitEvent(t, 0, isEnvelope(env.ID))
	if evt.Type != socketmode.EventTypeEventsAPI {
		t.Fatalf("event type %s, want events_api", evt.Type)
	}
	// slack-go refuses such acks itself; bypass it with a raw Response.
	big := strings.Repeat("x", slackfake.MaxAckSize)
	if err := c.sm.Send(socketmode.Response{EnvelopeID: env.ID, Payload: map[string]string{"text": big}}); err == nil {
		t.Fatal("slack-go accepted an oversized ack")
	}
	if err := c.sm.Ack(*evt.Request); err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(ctx); err != nil {
		t.Fatal(err)
	}
	acks := srv.Acks()
	if len(acks) != 1 || acks[0].Dropped || acks[0].Payload != nil {
		t.Errorf("acks = %+v, want one small ack without payload", acks)
	}
}

// TestCloseStopsEverything is not parallel: it inspects all goroutines
// while the parallel tests are still paused.
func TestCloseStopsEverything(t *testing.T) {
	srv := slackfake.New(slackfake.WithUsers(alice))
	c := startClient(t, srv, srv.AppToken())
	ctx := testCtx(t)
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		// A waiter must be released by Close.
		_, err := srv.WaitMessage(ctx, func(slackfake.Message) bool { return false })
		if err == nil {
			t.Error("WaitMessage returned without a message")
		}
	})
	srv.Close()
	wg.Wait()
	srv.Close() // idempotent
	if _, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/x", UserID: alice.ID}); err == nil {
		t.Error("SlashCommand succeeded on a closed server")
	}
	_ = c
	assertNoFakeGoroutines(t)
}

// TestRetryEventKeepsTheEventID: Slack's retry of an event comes as a new
// envelope with retry_attempt and retry_reason, and the same event_id; a
// message of a Slack Connect guest carries the guest's team (user_team).
func TestRetryEventKeepsTheEventID(t *testing.T) {
	t.Parallel()
	srv, c, ctx := aliceClient(t)
	srv.AddUser(slackfake.User{ID: "UGUEST", Email: "guest@other.example", TeamID: "T0OTHER"})
	_, env, err := srv.PostUserMessage(ctx, slackfake.UserMessage{UserID: "UGUEST", ChannelID: "C1", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	first, i := c.waitEvent(t, 0, isEnvelope(env.ID))
	if _, err := srv.RetryEvent(ctx, env); err != nil {
		t.Fatal(err)
	}
	var again socketmode.Event
	again, _ = c.waitEvent(t, i+1, func(e socketmode.Event) bool {
		return e.Request != nil && e.Request.RetryAttempt == 1
	})
	if again.Request.EnvelopeID == env.ID || again.Request.RetryReason != "timeout" {
		t.Errorf("retry request = %+v", again.Request)
	}
	id := func(e socketmode.Event) string {
		return e.Data.(slackevents.EventsAPIEvent).Data.(*slackevents.EventsAPICallbackEvent).EventID
	}
	if id(first) == "" || id(first) != id(again) {
		t.Errorf("event ids %q and %q; want the same", id(first), id(again))
	}
	me := first.Data.(slackevents.EventsAPIEvent).InnerEvent.Data.(*slackevents.MessageEvent)
	if me.UserTeam != "T0OTHER" {
		t.Errorf("user_team %q; want the guest's T0OTHER", me.UserTeam)
	}
	if _, err := srv.RetryEvent(ctx, &slackfake.Envelope{ID: "x", Type: "slash_commands"}); err == nil {
		t.Error("a slash command retried as an event")
	}
}
