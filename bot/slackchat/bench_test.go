package slackchat_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/deskbot/deskbot/bot/slackfake"
)

// BenchmarkSlashAck sends 1,000 slash commands per iteration through the
// fake Slack while every desk call takes 2 s, and reports the ack latency
// (delivery to ack, as measured by the fake): the ack must not wait for
// the desk.
func BenchmarkSlashAck(b *testing.B) {
	d := fakedesk.New()
	d.Delay = 2 * time.Second
	h := newE2E(b, d, []bot.Option{bot.WithCommandTimeout(time.Minute)})
	const perIter = 1000
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		envs := make([]*slackfake.Envelope, 0, perIter)
		for i := range perIter {
			env, err := h.fake.SlashCommand(h.ctx, slackfake.SlashCommand{Command: "/ticket", Text: fmt.Sprintf("show %d", 42+i%3), UserID: "UALICE", ChannelID: "C0DESK"})
			if err != nil {
				b.Fatal(err)
			}
			envs = append(envs, env)
		}
		for _, env := range envs {
			ack, err := env.WaitAck(h.ctx)
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, ack.Latency)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}
