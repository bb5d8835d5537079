package slackchat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// BenchmarkTicketFromMessageCost makes a ticket of a message with two
// replies (a :ticket: reaction), then reacts to it again, through the
// real sdclient against the desk simulator, and reports what each costs:
// desk requests and Slack Web API calls (warm caches: the people were
// looked up before).
func BenchmarkTicketFromMessageCost(b *testing.B) {
	sim, c, _ := fakedesk.Sim(b)
	desk := bot.NewDeskAdapter(c)
	h := newE2E(b, desk, nil)
	cost := roundCosts{sim: sim, h: h}
	for i := range b.N + 1 {
		// The first round warms the users.info cache; count from the next.
		cost.round(b, i)
		ts, _ := h.fake.UserMessage("UCAROL", "C0DESK", fmt.Sprintf("Printer %d on fire", i), "")
		_, _ = h.fake.UserMessage("UALICE", "C0DESK", "same here", ts)
		_, _ = h.fake.UserMessage("UCAROL", "C0DESK", "still", ts)
		cost.mark(0)
		react(b, h, "UBOB", ts)
		if _, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool { return m.ThreadTS == ts }); err != nil {
			b.Fatal(err)
		}
		cost.settled(b, 1)
		react(b, h, "UALICE", ts)
		if _, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool {
			return m.Ephemeral && m.User == "UALICE" && strings.Contains(m.Text, "already")
		}); err != nil {
			b.Fatal(err)
		}
		cost.settled(b, 2)
	}
	b.ReportMetric(float64(cost.cold[0][0]), "cold-desk-req/ticket")
	b.ReportMetric(float64(cost.cold[0][1]), "cold-slack-calls/ticket")
	cost.report(b, "ticket", "repeat")
}

// roundCosts counts, round by round of a benchmark, the desk requests
// and Slack calls of its two steps; the first round (cold caches) apart.
type roundCosts struct {
	sim  *sdsim.Server
	h    *e2e
	at   [2]int    // desk requests and Slack calls at the last mark
	sum  [2][2]int // [step][desk, slack] since the first round
	cold [2][2]int // the same in the first round
}

// round starts round i; after the first, the counts start again and so
// does b's timer.
func (c *roundCosts) round(b *testing.B, i int) {
	if i == 1 {
		c.cold, c.sum = c.sum, [2][2]int{}
		b.ResetTimer()
	}
}

// mark notes the counts now: 0 before the first step, 1 after it (the
// first step's cost), 2 after the second (its cost).
func (c *roundCosts) mark(n int) {
	now := [2]int{len(c.sim.Desk.Requests()), len(c.h.fake.Calls())}
	if n > 0 {
		c.sum[n-1][0] += now[0] - c.at[0]
		c.sum[n-1][1] += now[1] - c.at[1]
	}
	c.at = now
}

// settled waits until the bot is idle, then marks n (see mark).
func (c *roundCosts) settled(b *testing.B, n int) {
	b.Helper()
	waitIdle(b, c.h.ctx, c.h.slack)
	c.mark(n)
}

// report reports the desk requests and Slack calls per round of each
// step, named first and second ("desk-req/<first>" and so on).
func (c *roundCosts) report(b *testing.B, first, second string) {
	for i, name := range []string{first, second} {
		b.ReportMetric(float64(c.sum[i][0])/float64(b.N), "desk-req/"+name)
		b.ReportMetric(float64(c.sum[i][1])/float64(b.N), "slack-calls/"+name)
	}
}

func react(b *testing.B, h *e2e, user, ts string) {
	b.Helper()
	env, err := h.fake.ReactionAdded(h.ctx, user, "C0DESK", ts, "ticket")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.WaitAck(h.ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUnfurlCost shares a message with one ticket link by an agent
// who may see the ticket (warm caches: agent, statuses) and reports the
// desk requests and Slack calls of its unfurl, and of a link shared by a
// requester (no card).
func BenchmarkUnfurlCost(b *testing.B) {
	sim, c, id := fakedesk.Sim(b)
	desk := bot.NewDeskAdapter(c)
	h := newE2E(b, desk, nil)
	link := fmt.Sprintf("https://desk.example.com/a/tickets/%d", id)
	cost := roundCosts{sim: sim, h: h}
	for i := range b.N + 1 {
		cost.round(b, i)
		cost.mark(0)
		env, ts, err := h.fake.LinkShared(h.ctx, "UALICE", "C0DESK", link)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := h.fake.WaitUnfurl(h.ctx, func(u slackfake.Unfurl) bool { return u.TS == ts }); err != nil {
			b.Fatal(err)
		}
		cost.settled(b, 1)
		env, _, err = h.fake.LinkShared(h.ctx, "UCAROL", "C0DESK", link)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			b.Fatal(err)
		}
		cost.settled(b, 2)
	}
	b.ReportMetric(float64(cost.cold[0][0]), "cold-desk-req/unfurl")
	b.ReportMetric(float64(cost.cold[1][0]), "cold-desk-req/requester-link")
	cost.report(b, "unfurl", "requester-link")
}
