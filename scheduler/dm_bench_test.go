package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// BenchmarkDMNudges measures what dm: costs on the desk: 10,000 open
// tickets (assigned round-robin to 20 agents), 100 of them coming within
// 30 minutes of their due_by each minute. Per nudge the firing re-reads the
// ticket (as every firing does); the assignee's e-mail is one agent read
// per person per 10 minutes (the people cache), so at 100 nudges a minute
// the agent reads are at most 20 per 10 minutes.
func BenchmarkDMNudges(b *testing.B) {
	const tickets, perMinute, agents = 10000, 100, 20
	clk := clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	defer sim.Close()
	var ids []int64
	for i := range agents {
		ids = append(ids, sim.Desk.AddAgent(sdsim.Agent{FirstName: fmt.Sprintf("A%d", i), Email: fmt.Sprintf("a%d@example.com", i), Active: true}).ID)
	}
	for i := range tickets {
		// Ticket i comes within 30 minutes of its due_by in minute i/100.
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 2, ResponderID: ids[i%agents],
			DueBy: t0.Add(30*time.Minute + time.Duration(i/perMinute+1)*time.Minute - time.Second)})
	}
	st, err := store.Open(b.Context(), ":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := &dmNotifier{recNotifier: &recNotifier{}}
	rules := strings.Replace(nudgeRules, "    query: status:open\n", "    query: status:open\n    max_firings_per_cycle: 1000\n", 1)
	s, err := New(testLogger(b), ClientDesk(clientFor(b, sim)), mustRules(b, rules), st, n, WithClock(clk),
		WithRegistry(prometheus.NewRegistry()), WithMaxFiringsPerCycle(1000))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RunCycle(b.Context()); err != nil { // the first full sync
		b.Fatal(err)
	}
	sim.Desk.ResetRequests()
	sent0 := len(n.list())
	minutes := 0
	b.ResetTimer()
	for b.Loop() {
		clk.Advance(time.Minute)
		if _, err := s.RunCycle(b.Context()); err != nil {
			b.Fatal(err)
		}
		minutes++
	}
	b.StopTimer()
	var reads, people, other int
	for _, r := range sim.Desk.Requests() {
		switch {
		case strings.HasPrefix(r.Path, "/api/v2/agents/"):
			people++
		case r.Method == "GET" && strings.Count(r.Path, "/") == 4 && strings.HasPrefix(r.Path, "/api/v2/tickets/"):
			reads++
		default:
			other++
		}
	}
	dms := len(n.list()) - sent0
	if dms == 0 {
		b.Fatal("no nudge sent")
	}
	b.ReportMetric(float64(dms)/float64(minutes), "dms/minute")
	b.ReportMetric(float64(reads)/float64(dms), "re-reads/dm")
	b.ReportMetric(float64(people)*60/float64(minutes), "agent-reads/hour")
	b.ReportMetric(float64(people)/float64(dms), "agent-reads/dm")
	b.ReportMetric(float64(other)/float64(minutes), "sync-requests/minute")
}

// BenchmarkDigestReport computes a digest over a 10,000-ticket mirror:
// CPU only, no desk request (the report reads the mirror and the people
// cache).
func BenchmarkDigestReport(b *testing.B) {
	set := mustRules(b, digestRules)
	d := set.Digests()[0]
	ts := make([]*sdclient.Ticket, 10000)
	for i := range ts {
		due := t0.Add(time.Duration(i) * time.Minute)
		var agent int64
		if i%3 == 0 {
			agent = 7
		}
		group := int64(i % 12)
		ts[i] = &sdclient.Ticket{ID: int64(i + 1), Status: 2 + i%2, Priority: 1 + i%4, ResponderID: &agent, GroupID: &group,
			DueBy: &due, CreatedAt: t0.Add(-time.Duration(i) * time.Minute)}
	}
	s := &Scheduler{}
	var r DigestReport
	for b.Loop() {
		r = s.digestReport(d, ts, t0)
	}
	if r.Total != 10000 || r.BreachingTotal != 121 {
		b.Fatalf("report: %d tickets, %d breaching", r.Total, r.BreachingTotal)
	}
	b.ReportMetric(0, "desk-requests/digest")
}
