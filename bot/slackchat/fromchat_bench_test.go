package slackchat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/slackfake"
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
	var deskNew, slackNew, deskAgain, slackAgain, coldDesk, coldSlack int
	for i := range b.N + 1 {
		if i == 1 {
			// The first round warmed the users.info cache; count from here.
			coldDesk, coldSlack = deskNew, slackNew
			deskNew, slackNew, deskAgain, slackAgain = 0, 0, 0, 0
			b.ResetTimer()
		}
		ts, _ := h.fake.UserMessage("UCAROL", "C0DESK", fmt.Sprintf("Printer %d on fire", i), "")
		_, _ = h.fake.UserMessage("UALICE", "C0DESK", "same here", ts)
		_, _ = h.fake.UserMessage("UCAROL", "C0DESK", "still", ts)
		d0, s0 := len(sim.Desk.Requests()), len(h.fake.Calls())
		react(b, h, "UBOB", ts)
		if _, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool { return m.ThreadTS == ts }); err != nil {
			b.Fatal(err)
		}
		waitIdle(b, h.ctx, h.slack)
		d1, s1 := len(sim.Desk.Requests()), len(h.fake.Calls())
		react(b, h, "UALICE", ts)
		if _, err := h.fake.WaitMessage(h.ctx, func(m slackfake.Message) bool {
			return m.Ephemeral && m.User == "UALICE" && strings.Contains(m.Text, "already")
		}); err != nil {
			b.Fatal(err)
		}
		waitIdle(b, h.ctx, h.slack)
		deskNew += d1 - d0
		slackNew += s1 - s0
		deskAgain += len(sim.Desk.Requests()) - d1
		slackAgain += len(h.fake.Calls()) - s1
	}
	b.ReportMetric(float64(coldDesk), "cold-desk-req/ticket")
	b.ReportMetric(float64(coldSlack), "cold-slack-calls/ticket")
	b.ReportMetric(float64(deskNew)/float64(b.N), "desk-req/ticket")
	b.ReportMetric(float64(slackNew)/float64(b.N), "slack-calls/ticket")
	b.ReportMetric(float64(deskAgain)/float64(b.N), "desk-req/repeat")
	b.ReportMetric(float64(slackAgain)/float64(b.N), "slack-calls/repeat")
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
	var deskAgent, slackAgent, deskReq, slackReq, coldAgent, coldReq int
	for i := range b.N + 1 {
		if i == 1 {
			coldAgent, coldReq = deskAgent, deskReq
			deskAgent, slackAgent, deskReq, slackReq = 0, 0, 0, 0
			b.ResetTimer()
		}
		d0, s0 := len(sim.Desk.Requests()), len(h.fake.Calls())
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
		waitIdle(b, h.ctx, h.slack)
		d1, s1 := len(sim.Desk.Requests()), len(h.fake.Calls())
		env, _, err = h.fake.LinkShared(h.ctx, "UCAROL", "C0DESK", link)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			b.Fatal(err)
		}
		waitIdle(b, h.ctx, h.slack)
		deskAgent += d1 - d0
		slackAgent += s1 - s0
		deskReq += len(sim.Desk.Requests()) - d1
		slackReq += len(h.fake.Calls()) - s1
	}
	b.ReportMetric(float64(coldAgent), "cold-desk-req/unfurl")
	b.ReportMetric(float64(coldReq), "cold-desk-req/requester-link")
	b.ReportMetric(float64(deskAgent)/float64(b.N), "desk-req/unfurl")
	b.ReportMetric(float64(slackAgent)/float64(b.N), "slack-calls/unfurl")
	b.ReportMetric(float64(deskReq)/float64(b.N), "desk-req/requester-link")
	b.ReportMetric(float64(slackReq)/float64(b.N), "slack-calls/requester-link")
}
