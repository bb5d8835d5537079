package statuspage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// benchRules is 50 rules of the kinds a desk runs: by priority, status
// and assignment, with ifs that narrow them to a few hundred tickets each
// (half over the ticket's age).
func benchRules() string {
	var b strings.Builder
	b.WriteString("version: 1\nchannels: {desk: \"#it-desk\"}\nrules:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "  - name: rule-%02d\n", i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "    query: \"status:open AND priority:%d\"\n", 1+i%4)
		case 1:
			b.WriteString("    query: \"status:open AND agent_id:0\"\n")
		case 2:
			fmt.Fprintf(&b, "    query: \"status:%d\"\n", 2+i%3)
		default:
			b.WriteString("    query: \"status:open\"\n")
		}
		if i%2 == 1 {
			fmt.Fprintf(&b, "    if: 'ticket.id %% 25 == %d && now() - ticket.created_at > duration(\"%dh\")'\n", i%25, 1+i)
		} else {
			fmt.Fprintf(&b, "    if: 'ticket.id %% 10 == %d'\n", i%10)
		}
		fmt.Fprintf(&b, "    actions:\n      - note: \"rule %d on #{{ ticket.id }}: {{ ticket.subject }}\"\n", i)
	}
	return b.String()
}

// BenchmarkStatusPages renders every page over a desk of 10,000 open
// tickets, 50 rules and 10,000 firings in the ledger (SQLite), the last
// backtest a report of the 50 rules over 30 days, and reports
// the 99th percentile of a page's render time and the desk requests the
// pages made (issue 24: under 50 ms, and none).
func BenchmarkStatusPages(b *testing.B) {
	ctx := context.Background()
	// A dry run fills the mirror without acting; the ledger is filled
	// directly, as 200 finished firings of each rule.
	w := newWorldWith(b, benchRules(), []scheduler.Option{scheduler.WithDryRun(true)})
	t0 := time.Now()
	for i := range 10000 {
		at := t0.Add(-time.Duration(10000-i) * 30 * time.Second)
		t := sdsim.Ticket{Subject: fmt.Sprintf("<b>ticket</b> %d", i), Status: 2 + i%2, Priority: 1 + i%4, Source: 1, RequesterID: 1, CreatedAt: at, UpdatedAt: at}
		if i%3 != 0 {
			t.ResponderID = sdsim.DefaultAgentID
		}
		w.sim.Desk.AddTicket(t)
	}
	w.cycle(b)
	view, err := viewOf(ctx, w.sched.Memory())
	if err != nil {
		b.Fatal(err)
	}
	if view.Tickets != 10000 {
		b.Fatalf("the mirror holds %d tickets, want 10,000", view.Tickets)
	}
	ids := w.sim.Desk.TicketIDs()
	now := time.Now()
	n := 0
	filled := time.Now()
	for _, r := range w.set.Rules() {
		for i := range 200 {
			id := ids[(i*37+n)%len(ids)]
			f, err := w.st.Claim(ctx, rules.FiringKey{Rule: r.Name, TicketID: id}, r.Once, now.Add(-time.Duration(n)*7*time.Second), time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if f.Won {
				if err := w.st.Finish(ctx, f.ID, now.Add(-time.Duration(n)*7*time.Second+time.Second)); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	b.Logf("ledger filled with %d firings in %s", n, time.Since(filled).Round(time.Millisecond))
	if n < 9900 {
		b.Fatalf("only %d firings in the ledger", n)
	}
	keepBenchBacktest(b, w)
	// Rule pages evaluate their rule over the live mirror when asked.
	live := feed.NewLiveMirror(w.st)
	live.Attach(w.sched.Feed())
	h := w.handler(b, WithMirror(live))
	pages := []string{"/", "/rules", "/rules/rule-07", "/firings", "/firings?rule=rule-03", "/oncall", "/plan", "/backtest"}
	before := len(w.sim.Desk.Requests())
	var took, cpu []time.Duration
	perPage, perPageCPU := map[string][]time.Duration{}, map[string][]time.Duration{}
	b.ResetTimer()
	for b.Loop() {
		for _, p := range pages {
			start, startCPU := time.Now(), cpuTime()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
			took = append(took, time.Since(start))
			perPage[p] = append(perPage[p], time.Since(start))
			perPageCPU[p] = append(perPageCPU[p], cpuTime()-startCPU)
			cpu = append(cpu, cpuTime()-startCPU)
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s: %d", p, rec.Code)
			}
		}
	}
	b.StopTimer()
	for _, p := range pages {
		b.Logf("%s: p99 %.1f ms, cpu p99 %.1f ms", p, p99ms(perPage[p]), p99ms(perPageCPU[p]))
	}
	b.ReportMetric(p99ms(took), "render-p99-ms")
	// The process's CPU time per render: what a page costs when the
	// machine is shared (wall time then includes waiting for a core).
	b.ReportMetric(p99ms(cpu), "render-cpu-p99-ms")
	b.ReportMetric(float64(len(w.sim.Desk.Requests())-before), "desk-requests")
}

func p99ms(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[min(len(ds)-1, len(ds)*99/100)].Microseconds()) / 1000
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// keepBenchBacktest keeps, as `deskbot rules backtest` would, a report of
// the 50 rules over 30 days: each rule firing every day, compared with
// the supervisor, kept without its per-firing list (as a report this
// large is).
func keepBenchBacktest(b *testing.B, w *world) {
	b.Helper()
	to := time.Now().UTC().Truncate(time.Hour)
	from := to.Add(-30 * 24 * time.Hour)
	rep := backtest.Report{File: "rules.yaml", HistoryStart: from, From: from, To: to, Records: 4_320_000, Tickets: 10000,
		Cycles: 43200, Firings: []backtest.Firing{}, Limits: []string{"history exists from then"}}
	for i, r := range w.set.Rules() {
		rr := backtest.RuleReport{Name: r.Name, Schedule: "every 1m", Class: "updates and notes", HeldBack: i * 7,
			Supervisor: &backtest.Supervisor{Firings: 900, Compared: 850, SameTime: 20, Missed: 50,
				Later: backtest.Latency{N: 850, MedianSeconds: 1500, P90Seconds: 3000}},
			TimeToFire: backtest.Latency{N: 900, MedianSeconds: 30, P90Seconds: 55}}
		for d := range 30 {
			day := backtest.Day{Date: from.Add(time.Duration(d) * 24 * time.Hour).Format(time.DateOnly), Totals: backtest.Totals{Firings: 30 + d%7, Notes: 30 + d%7}}
			rr.Days = append(rr.Days, day)
			rr.Firings += day.Firings
			rr.Notes += day.Notes
		}
		for h := range rr.HourOfDay {
			rr.HourOfDay[h] = rr.Firings / 24
		}
		rr.Tickets = rr.Firings / 2
		rr.BusiestHour = &backtest.Hour{Start: from.Add(9 * time.Hour), Firings: 12}
		rep.Totals.Firings += rr.Firings
		rep.Totals.Notes += rr.Notes
		rep.Rules = append(rep.Rules, rr)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.st.KeepBacktest(context.Background(), store.Backtest{File: rep.File, RanAt: to, From: from, To: to,
		Firings: rep.Totals.Firings, Trimmed: true, Report: body}); err != nil {
		b.Fatal(err)
	}
	b.Logf("kept a backtest report of %d bytes", len(body))
}
