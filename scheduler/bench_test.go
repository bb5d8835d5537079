package scheduler

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// benchQueries are the 10 distinct queries of BenchmarkPollCycle's 50 rules.
var benchQueries = []string{
	"status:open",
	"status:open AND agent_id:0",
	"status:open AND priority:4",
	"status:open AND priority:3",
	"priority:1",
	"priority:2",
	"status:2",
	"status:3",
	"agent_id:0 AND priority:4",
	"status:3 AND priority:4",
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPollCycle polls a desk of 10,000 open tickets for 50 rules over
// 10 distinct queries (5 rules each; their ifs never hold, so the cycle is
// the poll and the evaluation) and compares the requests with the naive
// baseline where each rule pages through its own query. cpu-ms/cycle is the
// process's CPU time, the in-process simulator's included.
func BenchmarkPollCycle(b *testing.B) {
	clk := clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	defer sim.Close()
	for i := range 10000 {
		t := sdsim.Ticket{Subject: fmt.Sprintf("ticket %d", i), Status: 2 + i%2, Priority: 1 + i%4}
		if i%3 != 0 {
			t.ResponderID = sdsim.DefaultAgentID
		}
		sim.Desk.AddTicket(t)
	}
	var y strings.Builder
	y.WriteString("version: 1\nrules:\n")
	for q, query := range benchQueries {
		for r := range 5 {
			fmt.Fprintf(&y, "  - name: q%d-r%d\n    query: %q\n    if: ticket.subject == \"never-%d\"\n    every: 1m\n    actions: [{note: \"x\"}]\n", q, r, query, r)
		}
	}
	set := mustRules(b, y.String())
	client := clientFor(b, sim)
	st, err := store.Open(b.Context(), ":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := New(testLogger(b), ClientDesk(client), set, st, &recNotifier{}, WithClock(clk), WithRegistry(prometheus.NewRegistry()), WithMaxPages(0))
	if err != nil {
		b.Fatal(err)
	}

	// The naive baseline, measured: every rule pages through its own query.
	open, err := client.OpenStatuses(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	sim.Desk.ResetRequests()
	for _, r := range set.Rules() {
		q, err := r.ExpandQuery(open)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range client.Tickets.FilterAll(b.Context(), q.String(), nil) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	naive := len(sim.Desk.Requests())

	if _, err := s.RunOnce(b.Context()); err != nil { // warm: statuses, jobs
		b.Fatal(err)
	}
	b.ResetTimer()
	requests, tickets := 0, 0
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := s.RunOnce(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if !r.Complete {
				b.Fatalf("incomplete cycle: %+v", r)
			}
			requests += r.Requests
			tickets += r.Tickets
		}
		clk.Advance(time.Minute)
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	perCycle := float64(requests) / float64(b.N)
	b.ReportMetric(perCycle, "requests/cycle")
	b.ReportMetric(float64(naive), "naive-requests/cycle")
	b.ReportMetric(float64(naive)/perCycle, "naive/shared")
	b.ReportMetric(float64(tickets)/float64(b.N), "tickets/cycle")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/cycle")
}
