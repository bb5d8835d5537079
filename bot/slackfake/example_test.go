package slackfake_test

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// A real slack-go client posts to the fake; the test reads the recorder.
func ExampleNew() {
	srv := slackfake.New(slackfake.WithChannels(slackfake.Channel{ID: "C0DESK", Name: "it-desk"}))
	defer srv.Close()

	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL()))
	if _, _, err := api.PostMessageContext(context.Background(), "#it-desk", slack.MsgOptionText("Ticket 42 opened", false)); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range srv.Messages() {
		fmt.Println(m.Method, m.Channel, m.Text)
	}
	// Output: chat.postMessage C0DESK Ticket 42 opened
}
