package backtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// oracleRules are rules the generated ones lack: once every and once per
// ticket, a rule priority, grouped alerts, a small rule cap, an if that
// fails on some tickets, an if on the subject (which only retitled
// histories change), actions that fail to render on some, an if on now() that turns false again, and a cron
// rule every three hours.
const oracleRules = `  - name: every-2h
    query: "status:open AND priority:3"
    once: every 2h
    every: 10m
    actions:
      - note: "again"
  - name: once-ticket
    query: "tag:'vip'"
    once: ticket
    every: 5m
    actions:
      - note: "vip"
  - name: high
    query: "status:open AND agent_id:0"
    priority: high
    max_firings_per_cycle: 3
    every: 2m
    actions:
      - note: "nobody"
  - name: grouped
    query: "status:open AND priority:2"
    group_over: 2
    every: 3m
    actions:
      - alert: {channel: desk, text: "{{ ticket.id }}"}
  - name: failing
    query: "status:open AND group_id:2"
    if: 'ticket.priority == 4 ? int(ticket.subject) > 0 : ticket.priority > 1'
    every: 1m
    actions:
      - note: "fails on urgent ones"
  - name: titled
    query: "status:open"
    if: 'ticket.subject == "1"'
    every: 3m
    actions:
      - note: "titled"
  - name: render-fails
    query: "status:open AND group_id:3"
    every: 4m
    max_firings_per_cycle: 2
    actions:
      - note: "{{ ticket.priority == 1 ? int(ticket.subject) : ticket.id }}"
  - name: fresh
    query: "status:open"
    if: 'now() - ticket.updated_at < duration("2h")'
    every: 7m
    max_firings_per_cycle: 4
    actions:
      - reply: "still fresh"
  - name: three-hourly
    query: "status:3"
    cron: "30 */3 * * *"
    actions:
      - note: "pending"
`

// goneHistory is h with every nth record turned into the ticket's
// deletion (the next change brings it back).
type goneHistory struct {
	*genHistory
	n int
}

func (g goneHistory) Scan(ctx context.Context, from, to time.Time, fn func(history.Record) error) error {
	i := 0
	return g.genHistory.Scan(ctx, from, to, func(rec history.Record) error {
		i++
		if i%g.n == 0 {
			rec.Gone = true
		}
		return fn(rec)
	})
}

// retitled is h with, after every nth record, another that changes only
// the subject (to a number, which the titled rule's if reads) or the due
// date of the ticket changed last before it: changes of fields the engine
// does not class by themselves (the ticket's next record has them back).
type retitled struct {
	history.Reader
	n int
}

func (g retitled) Scan(ctx context.Context, from, to time.Time, fn func(history.Record) error) error {
	i := 0
	var prev *sdclient.Ticket // the last record's ticket but one
	return g.Reader.Scan(ctx, from, to, func(rec history.Record) error {
		if err := fn(rec); err != nil {
			return err
		}
		if i++; i%g.n == 0 && prev != nil && prev.ID != rec.Ticket.ID {
			t := *prev
			if i%(2*g.n) == 0 {
				t.Subject = strconv.Itoa(i % 3)
			} else {
				t.DueBy = ptr(rec.At.Add(time.Duration(i%7-3) * time.Hour))
			}
			if err := fn(history.Record{At: rec.At, Ticket: &t}); err != nil {
				return err
			}
		}
		prev = nil
		if !rec.Gone {
			prev = rec.Ticket
		}
		return nil
	})
}

// TestEngineMatchesOracle holds the incremental engine to the oracle's
// reports over generated histories: the same firings, totals, held-back
// counts, latencies and days, with and without the cycle cap and the
// supervisor.
func TestEngineMatchesOracle(t *testing.T) {
	set, err := rules.Load("equiv.yaml", []byte(benchRules(12)+oracleRules))
	if err != nil {
		t.Fatal(err)
	}
	// The failing rule must fail on some tickets (urgent ones) and not on others.
	probe := tk(1, 2, 4, 0, time.Time{})
	probe.GroupID = ptr(int64(2))
	if ds := set.EvaluateRule(set.Rule("failing"), []*sdclient.Ticket{probe}, time.Now()); len(ds) != 1 || ds[0].Err == nil {
		t.Fatalf("the failing rule does not fail: %+v", ds)
	}
	probe.Priority, probe.GroupID = 1, ptr(int64(3))
	if ds := set.EvaluateRule(set.Rule("render-fails"), []*sdclient.Ticket{probe}, time.Now()); len(ds) != 1 || ds[0].Err == nil {
		t.Fatalf("the render-fails rule does not fail: %+v", ds)
	}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC) // a Thursday
	cases := []struct {
		seed     uint64
		span     time.Duration
		from     time.Duration // after the history's start
		cycleCap int
		sup      bool
		retitle  int           // every retitle-th record changes the subject
		age      time.Duration // the tickets' age at the start (0: 30 days)
	}{
		{seed: 1, span: 4 * time.Hour},
		{seed: 2, span: 10 * time.Hour, from: time.Hour, cycleCap: 5, retitle: 7}, // past 09:00: the cron rules run
		{seed: 3, span: 6 * time.Hour, cycleCap: 12, sup: true},
		{seed: 4, span: 13 * time.Hour, from: 30 * time.Minute, cycleCap: 8, sup: true, retitle: 11},
		{seed: 5, span: 5 * time.Hour, sup: true},
		// half the tickets out of the supervisor's window until they change
		{seed: 6, span: 6 * time.Hour, sup: true, age: 60 * 24 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("seed=%d,span=%s,cap=%d,supervisor=%v,retitle=%d,age=%s", tc.seed, tc.span, tc.cycleCap, tc.sup, tc.retitle, tc.age), func(t *testing.T) {
			h := func() history.Reader {
				var h history.Reader = goneHistory{&genHistory{start: start, n: 200, perMin: 20, span: tc.span, seed: tc.seed, age: tc.age}, 97}
				if tc.retitle > 0 {
					h = retitled{h, tc.retitle}
				}
				return h
			}
			ctx := context.Background()
			from, to := start.Add(tc.from), start.Add(tc.span)
			opts := []Option{WithCycleCap(tc.cycleCap), WithSupervisor(tc.sup)}
			want, err := runOracle(ctx, set, h(), from, to, opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(ctx, set, h(), from, to, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if want.Totals.Firings == 0 {
				t.Fatal("the oracle fired nothing: the test would prove nothing")
			}
			compareReports(t, got, want)
			t.Logf("%d firings, %d cycles; held back %s", want.Totals.Firings, want.Cycles, heldBack(want))
		})
	}
}

// compareReports fails t with the first differences between got and want.
func compareReports(t *testing.T, got, want *Report) {
	t.Helper()
	if len(got.Firings) != len(want.Firings) {
		t.Errorf("%d firings, want %d", len(got.Firings), len(want.Firings))
	}
	shown := 0
	for i := range min(len(got.Firings), len(want.Firings)) {
		if g, w := got.Firings[i], want.Firings[i]; g != w && shown < 5 {
			t.Errorf("firing %d:\n got %+v\nwant %+v", i, g, w)
			shown++
		}
	}
	for i := range min(len(got.Rules), len(want.Rules)) {
		g, _ := json.Marshal(got.Rules[i])
		w, _ := json.Marshal(want.Rules[i])
		if string(g) != string(w) {
			t.Errorf("rule %s:\n got %s\nwant %s", want.Rules[i].Name, g, w)
		}
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("the reports differ (totals got %+v want %+v, cycles %d/%d, records %d/%d)", got.Totals, want.Totals, got.Cycles, want.Cycles, got.Records, got.Records)
	}
	if t.Failed() {
		t.Logf("held back: got %v want %v", heldBack(got), heldBack(want))
	}
}

func heldBack(rep *Report) string {
	var b strings.Builder
	for _, r := range rep.Rules {
		fmt.Fprintf(&b, "%s:%d ", r.Name, r.HeldBack)
	}
	return b.String()
}
