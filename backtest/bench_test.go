package backtest

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// genHistory is a desk of n tickets changing perMin times a minute from
// start for days, generated as it is scanned (the same records on every
// scan): 30 days of 100 changes a minute are 4.3 million ticket versions,
// some 2 GB in a history.Memory, which would measure the input rather than
// the replay. The store's Scan streams too.
type genHistory struct {
	start        time.Time
	n, perMin    int
	span         time.Duration
	seed         uint64
	age          time.Duration // the tickets' age at the start, at most (0: 30 days)
	recordsTotal int
}

func (g *genHistory) Start(context.Context) (time.Time, error) { return g.start, nil }

func (g *genHistory) Scan(ctx context.Context, from, to time.Time, fn func(history.Record) error) error {
	rng := rand.New(rand.NewPCG(g.seed, 1))
	tickets := make([]sdclient.Ticket, g.n)
	groups := []int64{1, 2, 3, 4, 5, 6}
	tagSets := [][]string{nil, {"vip"}, {"network"}, {"hardware", "vip"}, {"billing"}}
	for i := range tickets {
		created := g.start.Add(-time.Duration(rng.IntN(int(cmp.Or(g.age, 30*24*time.Hour)/time.Minute))) * time.Minute)
		t := &tickets[i]
		*t = sdclient.Ticket{ID: int64(i + 1), Subject: "ticket " + strconv.Itoa(i+1), Status: 2 + rng.IntN(4), Priority: 1 + rng.IntN(4),
			Source: 1 + rng.IntN(3), ResponderID: ptr(int64(rng.IntN(3)) * int64(1+rng.IntN(20))), GroupID: ptr(groups[rng.IntN(len(groups))]),
			Tags: tagSets[rng.IntN(len(tagSets))], CreatedAt: created, UpdatedAt: created}
		if rng.IntN(2) == 0 {
			t.DueBy = ptr(created.Add(time.Duration(4+rng.IntN(72)) * time.Hour))
		}
		if err := g.emit(ctx, from, to, history.Record{At: g.start, Ticket: ptr(*t)}, fn); err != nil {
			return err
		}
	}
	step := time.Minute / time.Duration(g.perMin)
	end := g.start.Add(g.span)
	for at := g.start.Add(step); at.Before(end) && at.Before(to); at = at.Add(step) {
		t := &tickets[rng.IntN(len(tickets))]
		switch rng.IntN(5) {
		case 0:
			t.Status = 2 + rng.IntN(4)
		case 1:
			t.Priority = 1 + rng.IntN(4)
		case 2:
			t.ResponderID = ptr(int64(rng.IntN(3)) * int64(1+rng.IntN(20)))
		case 3:
			t.GroupID = ptr(groups[rng.IntN(len(groups))])
		default:
			t.Tags = tagSets[rng.IntN(len(tagSets))]
		}
		t.UpdatedAt = at
		if err := g.emit(ctx, from, to, history.Record{At: at, Ticket: ptr(*t)}, fn); err != nil {
			return err
		}
	}
	return nil
}

func (g *genHistory) emit(ctx context.Context, from, to time.Time, r history.Record, fn func(history.Record) error) error {
	if r.At.Before(from) || !r.At.Before(to) {
		return nil
	}
	if r.Ticket.ID%4096 == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	g.recordsTotal++
	return fn(r)
}

// benchRules are n rules as a desk writes them: queries on status,
// priority, group, agent and tags; some with a condition on time; every
// 1m to 1h, a few cron; alerts, notes, replies and updates.
func benchRules(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nchannels: {desk: \"#desk\"}\nrules:\n")
	queries := []string{
		"status:open AND priority:4", "status:open AND agent_id:0", "status:open AND priority:3 AND agent_id:0",
		"status:open AND tag:'vip'", "status:3", "status:open AND group_id:%d", "status:open AND priority:4 AND group_id:%d",
		"status:open AND tag:'network'",
	}
	conds := []string{"", `now() - ticket.updated_at > duration("%dh")`, `has_due(ticket) && ticket.due_by < now()`, `now() - ticket.created_at > duration("%dh")`}
	every := []string{"every: 1m", "every: 5m", "every: 15m", "every: 1h", `cron: "0 9 * * 1-5"`}
	actions := []string{
		"      - alert: {channel: desk, text: \"{{ ticket.subject }}\"}\n",
		"      - note: \"seen {{ ticket.id }}\"\n",
		"      - reply: \"We are on it.\"\n",
		"      - set: {tags: [touched]}\n",
	}
	for i := range n {
		q := queries[i%len(queries)]
		if strings.Contains(q, "%d") {
			q = fmt.Sprintf(q, 1+i%6)
		}
		fmt.Fprintf(&b, "  - name: rule-%d\n    query: %q\n    %s\n", i, q, every[i%len(every)])
		if c := conds[i%len(conds)]; c != "" {
			if strings.Contains(c, "%d") {
				c = fmt.Sprintf(c, 1+i%24)
			}
			fmt.Fprintf(&b, "    if: '%s'\n", c)
		}
		b.WriteString("    actions:\n" + actions[i%len(actions)])
	}
	return b.String()
}

// BenchmarkBacktest replays 50 rules over 30 days of a 10,000-ticket desk
// with 100 changes a minute (BACKTEST_SPAN shortens it while iterating).
func BenchmarkBacktest(b *testing.B) {
	span := 30 * 24 * time.Hour
	if s := os.Getenv("BACKTEST_SPAN"); s != "" { // e.g. 2h while iterating
		if d, err := time.ParseDuration(s); err == nil {
			span = d
		}
	}
	set, err := rules.Load("bench.yaml", []byte(benchRules(50)))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	for _, sup := range []bool{false, true} {
		b.Run(fmt.Sprintf("supervisor=%v", sup), func(b *testing.B) {
			var rep *Report
			var peak uint64
			var g *genHistory
			var cpu time.Duration
			for b.Loop() {
				g = &genHistory{start: start, n: 10_000, perMin: 100, span: span, seed: 7}
				runtime.GC()
				stop := sampleHeap(&peak)
				before := cpuTime()
				rep, err = Run(b.Context(), set, g, start, start.Add(span), WithCycleCap(50), WithSupervisor(sup))
				cpu += cpuTime() - before
				stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "seconds")
			// The process's CPU time (all cores): what the replay costs
			// whatever else the machine runs.
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-seconds")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(rep.Totals.Firings), "firings")
			b.ReportMetric(float64(rep.Records), "changes")
			b.ReportMetric(float64(rep.Cycles), "cycles")
		})
	}
}

// sampleHeap records the peak of the heap in use until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
