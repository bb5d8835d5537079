package slackchat_test

import (
	"context"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// homeBenchTickets is the desk of the cost figures: 10,000 tickets, 40 of
// them assigned to the viewer (Alice) and 25 asked for by her (a third of
// them closed).
const homeBenchTickets = 10_000

// BenchmarkHomeOpen measures what one open of the Home tab costs, through
// slack-go against slackfake and the bot's desk adapter against sdsim:
// desk requests and Slack Web API calls per open, each open rebuilding the
// home (no interval) or, "bounded", the same person opening it again and
// again within the 30 s interval.
//
//	go test -run '^$' -bench BenchmarkHomeOpen -benchtime 200x ./bot/slackchat/
func BenchmarkHomeOpen(b *testing.B) {
	for _, bc := range []struct {
		name    string
		mirror  bool
		tickets int
		opts    []bot.Option
	}{
		// The simulator filters slowly (a scan per request): its desk is
		// smaller. What a home costs in requests does not depend on it.
		{"desk", false, 1000, []bot.Option{bot.WithHomeInterval(0)}},
		{"mirror", true, homeBenchTickets, []bot.Option{bot.WithHomeInterval(0)}},
		{"bounded", true, homeBenchTickets, nil},
	} {
		b.Run(bc.name, func(b *testing.B) { benchHomeOpen(b, bc.mirror, bc.tickets, bc.opts) })
	}
}

func benchHomeOpen(b *testing.B, mirror bool, tickets int, opts []bot.Option) {
	sim := sdsim.NewServer()
	b.Cleanup(sim.Close)
	d := sim.Desk
	d.SetRateLimit(0) // the cost is counted, not throttled
	alice := d.AddAgent(sdsim.Agent{FirstName: "Alice", Email: "alice@example.com"})
	carol := d.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	var mirrored []*sdclient.Ticket
	ws := int64(sdsim.DefaultWorkspaceID)
	for i := range tickets {
		tk := sdsim.Ticket{Subject: "Printer jam", Priority: 2, RequesterID: carol.ID, Status: sdclient.StatusOpen}
		if i%(tickets/40) == 0 {
			tk.ResponderID = alice.ID
		}
		if i%(tickets/25) == 0 {
			tk.RequesterID = alice.ID
		}
		if i%3 == 0 {
			tk.Status = sdclient.StatusClosed
		}
		x := d.AddTicket(tk)
		m := &sdclient.Ticket{ID: x.ID, Subject: x.Subject, Status: x.Status, Priority: x.Priority, RequesterID: x.RequesterID, WorkspaceID: &ws, CreatedAt: x.CreatedAt}
		if x.ResponderID != 0 {
			m.ResponderID = &alice.ID
		}
		mirrored = append(mirrored, m)
	}
	now, cursor := fakedesk.MirrorClock()
	opts = append([]bot.Option{bot.WithClock(func() time.Time { return now })}, opts...)
	if mirror {
		m := fakedesk.OpenMirror(b)
		if _, err := m.MirrorApply(context.Background(), 0, mirrored, nil, store.MirrorState{Cursor: cursor, Complete: true, FullSyncAt: cursor}); err != nil {
			b.Fatal(err)
		}
		opts = append(opts, bot.WithMirror(m))
	}
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()), sdclient.WithRatePerMinute(1_000_000))
	if err != nil {
		b.Fatal(err)
	}
	fake := slackfake.New(slackfake.WithUsers(slackUsers()...))
	b.Cleanup(fake.Close)
	h := newE2EWith(b, fake, bot.NewDeskAdapter(c), opts)
	open := func() {
		env, err := fake.AppHomeOpened(h.ctx, "UALICE", "home")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := env.WaitAck(h.ctx); err != nil {
			b.Fatal(err)
		}
		waitIdle(b, h.ctx, h.slack)
	}
	open() // warm: the agent, requester, statuses and e-mail lookups, cached for minutes
	if _, ok := fake.HomeView("UALICE"); !ok {
		b.Fatal("no Home view published")
	}
	d.ResetRequests()
	calls := len(fake.Calls())
	b.ResetTimer()
	for range b.N {
		open()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(len(d.Requests()))/n, "desk-req/open")
	b.ReportMetric(float64(len(fake.Calls())-calls)/n, "slack-calls/open")
}
