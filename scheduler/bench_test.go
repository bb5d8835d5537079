package scheduler

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
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

const benchSimEnv = "DESKBOT_BENCH_SIM"

// seedBench fills a simulator with BenchmarkPollCycle's 10,000 open
// tickets (statuses 2 and 3, every priority, a third unassigned), last
// changed before t0.
func seedBench(d *sdsim.Desk) {
	for i := range 10000 {
		at := t0.Add(-time.Duration(10000-i) * time.Second)
		t := sdsim.Ticket{Subject: fmt.Sprintf("ticket %d", i), Status: 2 + i%2, Priority: 1 + i%4, CreatedAt: at, UpdatedAt: at}
		if i%3 != 0 {
			t.ResponderID = sdsim.DefaultAgentID
		}
		d.AddTicket(t)
	}
}

// benchUpdatesPerMinute is the steady change rate of BenchmarkPollCycle's
// desk.
const benchUpdatesPerMinute = 100

// churn advances clk by a minute in steps, updating one ticket of d at
// each (spread over the desk, a different one each time): the steady
// change rate of a busy desk.
func churn(d *sdsim.Desk, clk *clockwork.FakeClock, n int, next *int64) {
	step := time.Minute / time.Duration(n)
	ids := d.TicketIDs()
	for range n {
		clk.Advance(step)
		id := ids[int(*next)%len(ids)]
		*next += 7919 // a prime: every ticket in turn, scattered
		d.UpdateTicket(id, func(t *sdsim.Ticket) { t.Subject += "." })
	}
}

// TestBenchSimChild is the simulator half of BenchmarkPollCycle, run in a
// child process so that the benchmark's CPU time is deskbot's own. It
// prints "sim-url URL", then answers each line on stdin until stdin
// closes: "cpu" with "sim-cpu NANOSECONDS" (its CPU time so far), "tick"
// with "ticked" after a minute of the desk's clock with
// benchUpdatesPerMinute ticket updates spread over it. It does nothing in
// a normal run.
func TestBenchSimChild(t *testing.T) {
	if os.Getenv(benchSimEnv) == "" {
		t.Skip("helper process of BenchmarkPollCycle (runs only when re-executed by it)")
	}
	clk, sim := testkit.FakeDesk(t, t0)
	seedBench(sim.Desk)
	fmt.Printf("sim-url %s\n", sim.URL)
	var next int64
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "cpu":
			fmt.Printf("sim-cpu %d\n", cpuTime())
		case "tick":
			churn(sim.Desk, clk, benchUpdatesPerMinute, &next)
			fmt.Println("ticked")
		}
	}
}

// benchSim is the simulator child process seen from the benchmark.
type benchSim struct {
	url string
	in  io.WriteCloser
	out *bufio.Scanner
}

func startBenchSim(b *testing.B) *benchSim {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestBenchSimChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchSimEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	bs := &benchSim{in: in, out: bufio.NewScanner(out)}
	bs.url = bs.read(b, "sim-url ")
	return bs
}

// read returns the value of the child's next line starting with prefix.
func (bs *benchSim) read(b *testing.B, prefix string) string {
	b.Helper()
	for bs.out.Scan() {
		if v, ok := strings.CutPrefix(bs.out.Text(), prefix); ok {
			return v
		}
	}
	b.Fatalf("simulator child ended before printing %q: %v", prefix, bs.out.Err())
	return ""
}

// tick moves the child desk's clock a minute on, with its updates.
func (bs *benchSim) tick(b *testing.B) {
	b.Helper()
	if _, err := io.WriteString(bs.in, "tick\n"); err != nil {
		b.Fatal(err)
	}
	bs.read(b, "ticked")
}

// cpu returns the child's CPU time so far.
func (bs *benchSim) cpu(b *testing.B) time.Duration {
	b.Helper()
	if _, err := io.WriteString(bs.in, "cpu\n"); err != nil {
		b.Fatal(err)
	}
	ns, err := strconv.ParseInt(bs.read(b, "sim-cpu "), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return time.Duration(ns)
}

// countingTransport counts the HTTP requests that reach the desk.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// BenchmarkPollCycle runs the cycle on a desk of 10,000 open tickets with
// a steady 100 ticket updates a minute, for 50 rules over 10 distinct
// queries (5 rules each; their ifs never hold, so a cycle is the sync and
// the evaluation), after the first full sync. It compares the requests
// with the naive poller that pages through each rule's own filter search.
// The simulator runs in a child process: cpu-ms/cycle is deskbot's own
// CPU time (client, JSON decoding, mirror, evaluation, store),
// sim-cpu-ms/cycle the simulator's.
func BenchmarkPollCycle(b *testing.B) {
	clk := clockwork.NewFakeClockAt(t0)
	sim := startBenchSim(b)
	var y strings.Builder
	y.WriteString("version: 1\nrules:\n")
	for q, query := range benchQueries {
		for r := range 5 {
			fmt.Fprintf(&y, "  - name: q%d-r%d\n    query: %q\n    if: ticket.subject == \"never-%d\"\n    every: 1m\n    actions: [{note: \"x\"}]\n", q, r, query, r)
		}
	}
	set := mustRules(b, y.String())
	sent := &countingTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
	client, err := sdclient.New(sim.url, sdsim.DefaultAPIKey, sdclient.WithRatePerMinute(1000000),
		sdclient.WithHTTPClient(&http.Client{Transport: sent}))
	if err != nil {
		b.Fatal(err)
	}
	st := testkit.Store(b, ":memory:")
	s, err := New(testLogger(b), firing.ClientDesk(client), set, st, &recNotifier{}, WithClock(clk), WithRegistry(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}

	// The naive baseline, measured: every rule pages through its own query.
	open, err := client.OpenStatuses(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	before := sent.n.Load()
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
	naive := sent.n.Load() - before

	first, err := s.RunCycle(b.Context()) // the first full sync
	if err != nil || !first.Sync.Complete || first.Sync.Tickets != 10000 {
		b.Fatalf("first cycle: %+v %v, want the 10,000 tickets mirrored", first.Sync, err)
	}
	b.ResetTimer()
	requests, decoded := 0, 0
	var cpu, simCPU time.Duration
	for b.Loop() {
		b.StopTimer()
		sim.tick(b)
		clk.Advance(time.Minute)
		sent0, simCPU0, cpu0 := sent.n.Load(), sim.cpu(b), cpuTime()
		b.StartTimer()
		c, err := s.RunCycle(b.Context())
		b.StopTimer()
		cpu += cpuTime() - cpu0
		simCPU += sim.cpu(b) - simCPU0
		if err != nil {
			b.Fatal(err)
		}
		if !c.Sync.Complete {
			b.Fatalf("incomplete cycle: %+v", c.Sync)
		}
		if got := sent.n.Load() - sent0; got != int64(c.Requests) {
			b.Fatalf("the cycle counted %d requests, the transport saw %d", c.Requests, got)
		}
		requests += c.Requests
		decoded += c.Sync.Decoded
		if testing.Verbose() {
			b.Logf("cycle: %d requests, sync %+v", c.Requests, *c.Sync)
		}
		b.StartTimer()
	}
	b.StopTimer()
	perCycle := float64(requests) / float64(b.N)
	b.ReportMetric(perCycle, "requests/cycle")
	b.ReportMetric(float64(naive), "naive-requests/cycle")
	b.ReportMetric(float64(naive)/max(perCycle, 1e-9), "naive/mirror")
	b.ReportMetric(float64(decoded)/float64(b.N), "tickets-decoded/cycle")
	b.ReportMetric(float64(first.Sync.FullSyncRequests), "first-sync-requests")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(float64(simCPU.Microseconds())/1000/float64(b.N), "sim-cpu-ms/cycle")
}

// BenchmarkPollScale runs the cycle at 1,000, 10,000 and 100,000 open
// tickets (the simulator in process) with a steady 100 updates a minute
// and the 50 rules of BenchmarkPollCycle. A cycle's requests stay flat
// whatever the desk's size; mirror-MiB is the Go heap the mirror holds;
// the first full sync's requests and the minutes it takes at the default
// budget (60 requests a minute, 24 of them ticket lists, a fifth of each
// kept for people: it is list-bound) are reported too.
func BenchmarkPollScale(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("tickets=%d", n), func(b *testing.B) {
			clk, sim := testkit.FakeDesk(b, t0)
			for i := range n {
				at := t0.Add(-time.Duration(n-i) * time.Second)
				t := sdsim.Ticket{Subject: fmt.Sprintf("ticket %d", i), Status: 2 + i%2, Priority: 1 + i%4, CreatedAt: at, UpdatedAt: at}
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
			client, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithRatePerMinute(1000000))
			if err != nil {
				b.Fatal(err)
			}
			st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			s, err := New(testLogger(b), firing.ClientDesk(client), mustRules(b, y.String()), st, &recNotifier{}, WithClock(clk),
				WithRegistry(prometheus.NewRegistry()))
			if err != nil {
				b.Fatal(err)
			}
			first, err := s.RunCycle(b.Context())
			if err != nil || first.Sync.Tickets != n {
				b.Fatalf("first cycle: %+v %v", first.Sync, err)
			}
			// The mirror's memory: what a second copy of it, loaded from
			// the store as a new leader's feed does (the tickets by id, and
			// the view it publishes, ordered by id), adds to the heap.
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			view, _, err := st.MirrorLoad(b.Context(), 0)
			if err != nil || len(view) != n {
				b.Fatalf("load the mirror: %d tickets, %v", len(view), err)
			}
			byID := make(map[int64]*sdclient.Ticket, len(view))
			for _, t := range view {
				byID[t.ID] = t
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			mirrorBytes := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(byID)
			runtime.KeepAlive(view)

			var next int64
			requests := 0
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				churn(sim.Desk, clk, benchUpdatesPerMinute, &next)
				b.StartTimer()
				c, err := s.RunCycle(b.Context())
				if err != nil || !c.Sync.Complete {
					b.Fatalf("cycle: %+v %v", c.Sync, err)
				}
				requests += c.Requests
			}
			b.ReportMetric(float64(requests)/float64(b.N), "requests/cycle")
			b.ReportMetric(mirrorBytes/(1<<20), "mirror-MiB")
			b.ReportMetric(float64(first.Sync.FullSyncRequests), "first-sync-requests")
			// Defaults: 60 a minute less a fifth is 48; lists 24 less a
			// fifth (4) is 20: the full sync is all lists.
			b.ReportMetric(float64(first.Sync.FullSyncRequests)/20, "first-sync-min@60rpm")
		})
	}
}
