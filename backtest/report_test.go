package backtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/history"
)

// A cap that held tickets back says what became of them when the replay
// ended: still waiting, stopped matching while held, or all fired later.
func TestHeldBackAtTheEnd(t *testing.T) {
	capped := `  - name: capped
    query: "status:open"
    every: 1m
    max_firings_per_cycle: 1
    actions:
      - note: "seen"
`
	cases := []struct {
		name             string
		closeThird       bool
		window           time.Duration
		held, wait, drop int
		want             string
	}{
		{"the window ends before the backlog drains", false, 30 * time.Second, 2, 2, 0,
			"held back by caps 2 times (a ticket held in two cycles counts twice); 2 tickets still waiting when the replay ended"},
		{"a held ticket closes", true, 90 * time.Second, 2, 0, 1,
			"held back by caps 2 times (a ticket held in two cycles counts twice); 1 ticket stopped matching while held"},
		{"the backlog drains", false, 5 * time.Minute, 3, 0, 0,
			"held back by caps 3 times (a ticket held in two cycles counts twice); each fired in a later cycle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &history.Memory{}
			m.Add(at(tk(1, 2, 4, 0, t0), t0)) // urgent: first in the queue
			m.Add(at(tk(2, 2, 3, 0, t0), t0))
			m.Add(at(tk(3, 2, 3, 0, t0), t0))
			if tc.closeThird {
				m.Add(at(tk(3, 5, 3, 0, t0), t0.Add(30*time.Second)))
			}
			rep, err := Run(context.Background(), load(t, capped), m, t0, t0.Add(tc.window))
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Rules[0]
			if r.HeldBack != tc.held || r.Waiting != tc.wait || r.Dropped != tc.drop {
				t.Errorf("held back %d, still waiting %d, dropped %d; want %d, %d, %d (firings %v)",
					r.HeldBack, r.Waiting, r.Dropped, tc.held, tc.wait, tc.drop, firings(rep))
			}
			var b strings.Builder
			if err := WriteText(&b, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "\n  "+tc.want+"\n") {
				t.Errorf("no %q in:\n%s", tc.want, b.String())
			}
		})
	}
}

// The sentences comparing with the desk's supervisor and the time to
// fire say "at the same time" and "at once" rather than "later: 0s".
func TestSupervisorAndWaitText(t *testing.T) {
	lat := func(median, p90 time.Duration, n int) Latency {
		return Latency{N: n, MedianSeconds: median.Seconds(), P90Seconds: p90.Seconds()}
	}
	cases := []struct {
		name string
		r    RuleReport
		sup  string
		wait string
	}{
		{"all at the same time", RuleReport{Totals: Totals{Firings: 2}, TimeToFire: lat(0, 0, 2),
			Supervisor: &Supervisor{Firings: 2, Compared: 2, SameTime: 2, Later: lat(0, 0, 2)}},
			"2 firings; it made 2 of deskbot's firings at the same time", "at once (each fired as its ticket began to match)"},
		{"all later", RuleReport{Totals: Totals{Firings: 47}, TimeToFire: lat(30*time.Second, 50*time.Second, 47),
			Supervisor: &Supervisor{Firings: 47, Compared: 36, Missed: 11, Later: lat(24*time.Minute, 53*time.Minute, 36)}},
			"47 firings; it made 36 of deskbot's firings later: median 24m, p90 53m later; 11 never (the ticket stopped matching before its hourly run)",
			"median 30s, p90 50s"},
		{"some at the same time, some not comparable", RuleReport{Totals: Totals{Firings: 30}, TimeToFire: lat(0, time.Minute, 30),
			Supervisor: &Supervisor{Firings: 12, Compared: 10, SameTime: 3, Unreached: 20, Later: lat(20*time.Minute, 50*time.Minute, 10)}},
			"12 firings; it made 10 of deskbot's firings too, 7 later and 3 at the same time: median 20m, p90 50m later; 20 of deskbot's came after its last hourly run in the replay, so cannot be compared",
			"median 0s, p90 1m"},
		{"none", RuleReport{Supervisor: &Supervisor{}}, "0 firings", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SupervisorText(tc.r); got != tc.sup {
				t.Errorf("SupervisorText = %q\nwant            %q", got, tc.sup)
			}
			if got := WaitText(tc.r); got != tc.wait {
				t.Errorf("WaitText = %q, want %q", got, tc.wait)
			}
		})
	}
}

// The limits say that the replay does not wait for the desk's request
// budget, and NoteBudget says whether the firings' requests would have
// outrun it.
func TestLimitsStateTheRequestBudget(t *testing.T) {
	noted := `  - name: noted
    query: "status:open"
    every: 1m
    actions:
      - note: "seen"
`
	m := &history.Memory{}
	for id := int64(1); id <= 3; id++ { // three firings in the first minute: a re-read and a note each
		m.Add(at(tk(id, 2, 2, 0, t0), t0))
	}
	budget := func(rep *Report) []string {
		var out []string
		for _, l := range rep.Limits {
			if strings.Contains(l, "request budget") {
				out = append(out, l)
			}
		}
		return out
	}
	quiet := &history.Memory{}
	quiet.Add(at(tk(9, 4, 2, 0, t0), t0)) // resolved: nothing fires
	general := "the desk's request budget (DESKBOT_DESK_RATE_PER_MIN) is not replayed: live, each firing waits for its desk requests"
	cases := []struct {
		name       string
		history    *history.Memory
		background int // 0: NoteBudget not called
		want       string
	}{
		{"stated", m, 0, general},
		{"no firings", quiet, 48, general},
		{"outrun", m, 5, "the desk's request budget is not replayed: in 1 minute the firings needed more desk requests (at most 6: a re-read each, and one per note, public reply or update) than the 5 a minute the scheduler may spend"},
		{"within", m, 48, "the desk's request budget is not replayed; here the firings needed at most 6 desk requests in a minute (a re-read each, and one per note, public reply or update), within the 48 a minute"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), load(t, noted), tc.history, t0, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if tc.background > 0 {
				NoteBudget(rep, tc.background)
			}
			got := budget(rep)
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("the limits on the request budget: %q\nwant one beginning %q", got, tc.want)
			}
		})
	}
}
