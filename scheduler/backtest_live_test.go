package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/history/recorder"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// lazyRecorder hands the feed's changes to the history's recorder, which
// needs the store the test environment opens after the scheduler's
// options are given.
type lazyRecorder struct{ rec **recorder.Recorder }

func (l lazyRecorder) FeedChanged(ctx context.Context, c feed.Changes) { (*l.rec).FeedChanged(ctx, c) }
func (l lazyRecorder) FeedFullSynced(ctx context.Context, at time.Time, tickets []*sdclient.Ticket) {
	(*l.rec).FeedFullSynced(ctx, at, tickets)
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
// with generated traffic for a week of fake-clock time, records the
// history as deskbot does (history/recorder, a feed subscriber, into the
// SQLite store, the first full sync's starting state included), and
// checks that the backtest of the same rules over the store's history
// finds exactly the firings the live run made.
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
		{"rules.example.yaml", string(example), true, weekHours},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { liveAgainstBacktest(t, tc.rules, tc.scheduled, tc.hours) })
	}
}

// weekHours is the span of the example rules' live run: a week (seven
// mornings of the weekday cron rule, a weekend, 10,080 cycles). Under the
// race detector, which slows the embedded SQLite about thirteen times
// (race_on_test.go), it is the first 26 hours: the week would take some
// eight minutes there, and the race detector looks for races, which a
// day's cycles exercise as well as a week's.
var weekHours = map[bool]int{false: 7 * 24, true: 26}[raceEnabled]

func liveAgainstBacktest(t *testing.T, rulesYAML string, ticked bool, hours int) {
	var rec *recorder.Recorder
	var esc *oncall.Escalator
	e := newEnvNotifier(t, []sdsim.Option{sdsim.WithGenerated(3, 120)}, true, rulesYAML, WithSubscriber(lazyRecorder{&rec}),
		func(cfg *config) { cfg.escalator = lazyEscalator{&esc} })
	rec = recorder.New(e.st, recorder.WithClock(e.clk.Now), recorder.WithLogger(testLogger(t)))
	if oc := e.s.set.OnCall(); oc != nil {
		var err error
		if esc, err = oncall.NewEscalator(oc, e.st, &recPager{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A sixth of the tickets is never touched, so that rules waiting for
	// days without an update (the example's pending-reminder) fire too.
	ids := e.sim.Desk.TicketIDs()
	ids, quiet := ids[:len(ids)*5/6], ids[len(ids)*5/6:]
	for _, id := range quiet[:len(quiet)/2] { // waiting for the requester
		e.sim.Desk.UpdateTicket(id, func(tk *sdsim.Ticket) { tk.Status = 3 })
	}
	start := e.clk.Now()
	if res := e.runOnce(); !allComplete(res) {
		t.Fatalf("first cycle incomplete: %+v", res)
	}
	if from, err := e.st.Start(t.Context()); err != nil || !from.Equal(start) {
		t.Fatalf("the history begins at %v (%v), want the first full sync's %v", from, err, start)
	}
	rng := rand.New(rand.NewPCG(25, 1))
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
	rep, err := backtest.Run(t.Context(), e.s.set, e.st, start, end.Add(time.Second), backtest.WithCycleCap(DefaultMaxFiringsPerCycle))
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("BACKTEST_EXAMPLE"); path != "" && ticked {
		writeExample(t, path, rulesYAML, e.st, start, end.Add(time.Second))
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
		if r.Firings == 0 && hours >= 7*24 {
			t.Errorf("rule %s never fired in the week: the traffic does not exercise it", r.Name)
		}
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

// writeExample writes the report docs/backtest.md shows (go test -run
// 'TestBacktestMatchesLiveRun/rules.example' with BACKTEST_EXAMPLE=file):
// the rules against an old file whose unassigned-15m waited two hours
// from the last update, with the supervisor and the default budget.
func writeExample(t *testing.T, path, rulesYAML string, h history.Reader, from, to time.Time) {
	const now = `if: now() - ticket.created_at > duration("15m") && !(ticket.status == Open && ticket.priority == Urgent)`
	if !strings.Contains(rulesYAML, now) {
		t.Fatal("rules.example.yaml's unassigned-15m changed: update writeExample")
	}
	old := strings.Replace(rulesYAML, now, `if: now() - ticket.updated_at > duration("2h")`, 1)
	set, err := rules.Load("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatal(err)
	}
	oldSet, err := rules.Load("rules.old.yaml", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	opts := []backtest.Option{backtest.WithCycleCap(DefaultMaxFiringsPerCycle)}
	rep, err := backtest.Run(t.Context(), set, h, from, to, append(opts, backtest.WithSupervisor(true))...)
	if err != nil {
		t.Fatal(err)
	}
	oldRep, err := backtest.Run(t.Context(), oldSet, h, from, to, opts...)
	if err != nil {
		t.Fatal(err)
	}
	backtest.Compare(oldRep, rep)
	backtest.NoteBudget(rep, 48) // DESKBOT_DESK_RATE_PER_MIN's default 60 less a fifth for people
	var b strings.Builder
	if err := backtest.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
