package slackfake_test

import (
	"context"
	"testing"
	"time"

	"github.com/slack-go/slack/socketmode"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// BenchmarkSlashCommandRoundTrip measures one slash command from the fake
// through the real socketmode client and back as an ack.
func BenchmarkSlashCommandRoundTrip(b *testing.B) {
	srv := slackfake.New(slackfake.WithUsers(alice))
	defer srv.Close()
	api := webClient(srv, srv.BotToken())
	sm := socketmode.New(api)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel() // stop the client before the deferred Close
	go func() { _ = sm.RunContext(ctx) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-sm.Events:
				if evt.Type == socketmode.EventTypeSlashCommand {
					_ = sm.Ack(*evt.Request)
				}
			}
		}
	}()
	if err := srv.WaitConnected(ctx, 1); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		env, err := srv.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 1", UserID: alice.ID, ChannelID: "C1"})
		if err != nil {
			b.Fatal(err)
		}
		ack, err := env.WaitAck(ctx)
		if err != nil {
			b.Fatal(err)
		}
		total += ack.Latency
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-ack-latency/op")
}
