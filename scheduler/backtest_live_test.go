package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// historyRecorder records the feed's changes into a history.Memory, as
// package history's recorder does in the store.
type historyRecorder struct {
	mu  sync.Mutex
	mem *history.Memory
}

func (h *historyRecorder) FeedChanged(_ context.Context, c feed.Changes) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range c.Tickets {
		cp := *t
		cp.Description, cp.DescriptionText = "", "" // not recorded
		h.mem.Add(history.Record{At: t.UpdatedAt, Ticket: &cp})
	}
}

// liveRules use recorded fields only, so the replay must be exact. They
// run every minute: RunOnce runs every job at each call.
const liveRules = `version: 1
channels: {desk: "#desk"}
rules:
  - name: urgent-unassigned
    query: "status:open AND priority:4 AND agent_id:0"
    every: 1m
    max_firings_per_cycle: 3
    actions:
      - alert: {channel: desk, text: "Urgent #{{ ticket.id }}: {{ ticket.subject }}"}
  - name: waiting-an-hour
    query: "status:open AND agent_id:0"
    if: 'now() - ticket.updated_at > duration("1h")'
    every: 1m
    actions:
      - alert: {channel: desk, text: "#{{ ticket.id }} waits"}
  - name: vip-pending
    query: "status:3 AND tag:'vip'"
    every: 1m
    once: every 2h
    actions:
      - alert: {channel: desk, text: "VIP #{{ ticket.id }} pending"}
`

// TestBacktestMatchesLiveRun drives the scheduler over a simulated desk
// with generated traffic for hours of fake-clock time, records the feed's
// changes into a history.Memory, and checks that the backtest of the same
// rules over that history finds exactly the firings the live run made.
func TestBacktestMatchesLiveRun(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		rules     string
		scheduled bool // cycles as gocron ticks them (schedules, catch-up) rather than RunOnce's every job
		hours     int
	}{
		{"recorded fields, caps, once every", liveRules, false, 6},
		// rules.example.yaml: every 1m and 5m rules, a cron rule at 09:00
		// on weekdays, pages with an escalation policy (t0 is a Monday 09:00).
		{"rules.example.yaml", string(example), true, 26},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { liveAgainstBacktest(t, tc.rules, tc.scheduled, tc.hours) })
	}
}

func liveAgainstBacktest(t *testing.T, rulesYAML string, ticked bool, hours int) {
	rec := &historyRecorder{mem: &history.Memory{}}
	var esc *oncall.Escalator
	e := newEnvNotifier(t, []sdsim.Option{sdsim.WithGenerated(3, 120)}, true, rulesYAML, WithSubscriber(rec),
		func(cfg *config) { cfg.escalator = lazyEscalator{&esc} })
	if oc := e.s.set.OnCall(); oc != nil {
		var err error
		if esc, err = oncall.NewEscalator(oc, e.st, &recPager{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	start := e.clk.Now()
	if res := e.runOnce(); !allComplete(res) {
		t.Fatalf("first cycle incomplete: %+v", res)
	}
	// The starting state: what the first full sync saw, at its time.
	for _, tk := range e.s.feed.Snapshot() {
		cp := *tk
		cp.Description, cp.DescriptionText = "", ""
		rec.mem.Add(history.Record{At: start, Ticket: &cp})
	}
	rng := rand.New(rand.NewPCG(25, 1))
	ids := e.sim.Desk.TicketIDs()
	var end time.Time
	for minute := 1; minute <= hours*60; minute++ {
		e.clk.Advance(30 * time.Second)
		for range rng.IntN(4) { // a few changes a minute
			id := ids[rng.IntN(len(ids))]
			e.sim.Desk.UpdateTicket(id, func(tk *sdsim.Ticket) {
				switch rng.IntN(4) {
				case 0:
					tk.Priority = 1 + rng.IntN(4)
				case 1:
					tk.ResponderID = int64(rng.IntN(2)) * int64(1+rng.IntN(3))
				case 2:
					tk.Status = 2 + rng.IntN(2)
				default:
					tk.Tags = [][]string{nil, {"vip"}}[rng.IntN(2)]
				}
			})
		}
		e.clk.Advance(30 * time.Second)
		if ticked {
			if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" && c.Skipped != "idle" {
				t.Fatalf("minute %d: cycle skipped: %s", minute, c.Skipped)
			}
		} else if res := e.runOnce(); !allComplete(res) {
			t.Fatalf("minute %d: incomplete cycle %+v", minute, res)
		}
		end = e.clk.Now()
	}

	rows, err := e.st.RecentFirings(t.Context(), store.FiringFilter{Limit: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, r := range rows {
		if !r.Done {
			t.Fatalf("firing left pending: %+v", r)
		}
		if ticked && r.FiredAt.Equal(start) && e.s.set.Rule(r.Rule).Cron != "" {
			// The first cycle is RunOnce's, to sync the mirror inline, and
			// RunOnce runs every job, cron ones too; gocron's ticks (and
			// the backtest) run a cron rule only at its times.
			continue
		}
		live = append(live, fmt.Sprintf("%s #%d @%s", r.Rule, r.TicketID, r.FiredAt.Sub(start)))
	}
	rep, err := backtest.Run(t.Context(), e.s.set, rec.mem, start, end.Add(time.Second), backtest.WithCycleCap(DefaultMaxFiringsPerCycle))
	if err != nil {
		t.Fatal(err)
	}
	var replayed []string
	for _, f := range rep.Firings {
		replayed = append(replayed, fmt.Sprintf("%s #%d @%s", f.Rule, f.TicketID, f.At.Sub(start)))
	}
	slices.Sort(live)
	slices.Sort(replayed)
	if len(live) < 10 {
		t.Fatalf("the live run fired only %d times: the traffic does not exercise the rules", len(live))
	}
	if !slices.Equal(live, replayed) {
		t.Errorf("the backtest differs from the live run (%d live, %d replayed)\nonly live: %q\nonly replayed: %q",
			len(live), len(replayed), minus(live, replayed), minus(replayed, live))
	}
	perRule := map[string]int{}
	for _, r := range rep.Rules {
		perRule[r.Name] = r.Firings
	}
	t.Logf("live and replayed: %d firings %v over %d changes", len(live), perRule, rep.Records)
}

// minus is a without the elements of b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
