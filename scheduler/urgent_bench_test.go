package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
)

// backlogRules are BenchmarkUrgentDuringBacklog's rules: a routine note on
// every low-priority ticket, and the urgent alert LAST in the file, as a
// rules file grows.
const backlogRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: note-low
    query: "status:open AND priority:1"
    actions:
      - note: "Routine check: still open"
  - name: alert-urgent-unassigned
    query: "status:open AND priority:4 AND agent_id:0"
    every: 30s
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }} unassigned: {{ ticket.subject }}"}
`

// Shape of BenchmarkUrgentDuringBacklog: the backlog, when the urgent
// tickets arrive (one at a time, at different phases of the cycles) and
// how long the run goes on after the last.
const (
	backlogTickets = 1020 // the first cycle fires 20 (max_firings_per_cycle): 1,000 stay queued
	urgentWatch    = 4 * time.Minute
	backlogStep    = 200 * time.Millisecond // the fake clock's step
)

// urgentArrivals are when the urgent tickets arrive, after the first cycle.
var urgentArrivals = []time.Duration{3 * time.Minute, 4*time.Minute + 10*time.Second,
	5*time.Minute + 25*time.Second, 6*time.Minute + 43*time.Second}

// timedNotifier records the fake clock's time of each alert.
type timedNotifier struct {
	*recNotifier
	clk clockwork.Clock
	mu  sync.Mutex
	at  map[int64]time.Time // first alert per ticket
}

func (n *timedNotifier) Alert(ctx context.Context, a firing.Alert) error {
	if err := n.recNotifier.Alert(ctx, a); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.at[a.Ticket.ID]; !ok {
		n.at[a.Ticket.ID] = n.clk.Now()
	}
	return nil
}

func (n *timedNotifier) alertedAt(id int64) (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t, ok := n.at[id]
	return t, ok
}

// BenchmarkUrgentDuringBacklog runs the scheduler against sdsim through
// the real sdclient at the default budget (60 requests a minute, a fifth
// kept for people; the default per-cycle caps) on a fake clock, with
// 1,000 routine firings queued (a note on every low-priority ticket). A
// new urgent, unassigned ticket arrives at the desk mid-backlog; the
// urgent rule (every 30s, so the feed ticks every 30s) is last in the
// file. urgent-latency-s is the time from the ticket's arrival at the desk
// to its alert reaching the chat (goal: at most two feed intervals, 60 s);
// routine-per-min the routine notes written a minute meanwhile (> 0: the
// backlog still drains); feed-gap-max-s the longest time between two
// reads of the change feed (the feed keeps its 30 s interval while the
// backlog drains). Four urgent tickets arrive one at a time, at
// different phases of the cycles; the figure is the slowest of them.
//
// The cycles run as gocron runs them in singleton mode (one at a time, a
// tick that finds one running skipped), and the fake clock moves on only
// while the scheduler waits on it (for the next tick or the request
// budget), so the figures do not depend on the machine's speed.
func BenchmarkUrgentDuringBacklog(b *testing.B) {
	var latency, perMin, gap float64
	for b.Loop() {
		l, r, g := urgentDuringBacklog(b)
		latency += l.Seconds()
		perMin += r
		gap = max(gap, g.Seconds())
	}
	b.ReportMetric(latency/float64(b.N), "urgent-latency-s")
	b.ReportMetric(perMin/float64(b.N), "routine-per-min")
	b.ReportMetric(gap, "feed-gap-max-s")
}

// urgentDuringBacklog is one run of BenchmarkUrgentDuringBacklog: the
// slowest urgent alert, the routine notes a minute and the longest gap
// between two reads of the change feed.
func urgentDuringBacklog(b *testing.B) (latency time.Duration, routinePerMin float64, feedGap time.Duration) {
	clk := clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	defer sim.Close()
	for i := range backlogTickets {
		at := t0.Add(-time.Duration(backlogTickets-i) * time.Minute)
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("routine %d", i), Status: 2, Priority: 1,
			ResponderID: sdsim.DefaultAgentID, CreatedAt: at, UpdatedAt: at})
	}
	// The defaults of cmd/deskbot: 60 requests a minute, 24 of them ticket
	// lists, a fifth of each kept for people.
	client, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithClock(clk),
		sdclient.WithRatePerMinute(60), sdclient.WithListRatePerMinute(24))
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(b.Context(), ":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	notif := &timedNotifier{recNotifier: &recNotifier{}, clk: clk, at: map[int64]time.Time{}}
	s, err := New(testLogger(b), firing.ClientDesk(client), mustRules(b, backlogRules), st, notif, WithClock(clk),
		WithRegistry(prometheus.NewRegistry()), WithBudget(client.BackgroundBudget()),
		WithListBudget(client.BackgroundListBudget()), WithSingleton(false))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()

	// The first cycle: the full sync, and the first capped firings.
	var first Cycle
	driveClock(b, clk, func() bool {
		first, err = s.RunCycle(ctx)
		return true
	}, nil)
	if err != nil || !first.Sync.Complete {
		b.Fatalf("first cycle: %+v %v", first.Sync, err)
	}
	notes0 := countNotes(sim, "Routine check")
	if queued := backlogTickets - notes0; queued < 1000 {
		b.Fatalf("%d routine firings queued after the first cycle, want 1,000", queued)
	}

	// The cycles, as gocron ticks them, until the run ends.
	tick := s.tickEvery()
	start := clk.Now()
	end := start.Add(urgentArrivals[len(urgentArrivals)-1] + urgentWatch)
	var urgent []sdsim.Ticket
	var arrived []time.Time
	driveClock(b, clk, func() bool {
		next := clk.Now().Add(tick)
		for {
			select {
			case <-ctx.Done():
				return true
			case <-clk.After(clk.Until(next)):
			}
			if !clk.Now().Before(end) {
				return true
			}
			s.runCycle(ctx, scheduled)
			for now := clk.Now(); !next.After(now); {
				next = next.Add(tick)
			}
		}
	}, func(now time.Time) {
		if i := len(arrived); i < len(urgentArrivals) && !now.Before(start.Add(urgentArrivals[i])) {
			arrived = append(arrived, now)
			urgent = append(urgent, sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Mail server down (%d)", i),
				Status: 2, Priority: 4}))
		}
	})
	for i, u := range urgent {
		at, ok := notif.alertedAt(u.ID)
		if !ok {
			b.Logf("the urgent ticket #%d was not alerted by the end of the run", u.ID)
			at = end
		}
		if testing.Verbose() {
			b.Logf("urgent #%d arrived %s, alerted %s", u.ID, arrived[i].Format(time.TimeOnly), at.Format(time.TimeOnly))
		}
		latency = max(latency, at.Sub(arrived[i]))
	}
	routine := countNotes(sim, "Routine check") - notes0
	minutes := end.Sub(start).Minutes()
	var last time.Time
	for _, r := range sim.Desk.Requests() {
		if r.Method != "GET" || r.Path != "/api/v2/tickets" || r.Time.Before(start) {
			continue
		}
		if !last.IsZero() {
			feedGap = max(feedGap, r.Time.Sub(last))
		}
		last = r.Time
	}
	if testing.Verbose() {
		b.Logf("%d routine notes in %.0f min; the change feed read at most %v apart", routine, minutes, feedGap)
	}
	return latency, float64(routine) / minutes, feedGap
}

// driveClock runs work in a goroutine and moves clk on by backlogStep
// whenever something waits on it (the next tick, the request budget),
// calling at with the new time after each step, until work returns.
// Between steps the scheduler runs at full speed in real time: the fake
// clock stands still while it works.
func driveClock(b *testing.B, clk *clockwork.FakeClock, work func() bool, at func(time.Time)) {
	b.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		work()
	}()
	for {
		waiting := make(chan error, 1)
		wctx, stop := context.WithCancel(b.Context())
		go func() { waiting <- clk.BlockUntilContext(wctx, 1) }()
		select {
		case <-done:
			stop()
			<-waiting
			return
		case err := <-waiting:
			stop()
			if err != nil {
				b.Fatal(err)
			}
		}
		clk.Advance(backlogStep)
		if at != nil {
			at(clk.Now())
		}
	}
}

// countNotes counts the notes on the simulator's tickets with text.
func countNotes(sim *sdsim.Server, text string) int {
	n := 0
	for _, id := range sim.Desk.TicketIDs() {
		for _, c := range sim.Desk.Conversations(id) {
			if strings.Contains(c.Body, text) {
				n++
			}
		}
	}
	return n
}
