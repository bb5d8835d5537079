package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLeaderFailover(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	sim := sdsim.NewServer()
	defer sim.Close()
	first := sim.Desk.AddTicket(sdsim.Ticket{Subject: "first", Priority: 4})
	set := mustRules(t, strings.Replace(urgentRules, "every: 1m", "every: 1s", 1))
	notif := &recNotifier{}

	type replica struct {
		s  *Scheduler
		el *store.Leadership
		st *store.Store
	}
	newReplica := func() replica {
		st, err := store.Open(t.Context(), dsn, store.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		el, err := st.Leadership(t.Context(), testLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { el.Close(t.Context()) })
		s, err := New(testLogger(t), firing.ClientDesk(testkit.DeskClient(t, sim)), set, st, notif, WithElector(el))
		if err != nil {
			t.Fatal(err)
		}
		return replica{s, el, st}
	}
	polled := func(r replica) int {
		n := 0
		for _, j := range r.s.Ready().Jobs {
			if !j.LastComplete.IsZero() {
				n++
			}
		}
		return n
	}
	a, b := newReplica(), newReplica()
	if err := a.s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first replica to lead and alert", 20*time.Second, func() bool { return len(notif.forTicket(first.ID)) == 1 })
	if err := b.s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer b.s.Stop(t.Context())
	// Let several ticks pass: the leader keeps polling, the follower never does.
	before := metricValue(t, a.s.m.cycles.WithLabelValues("page-urgent", "complete"))
	waitFor(t, "the leader to poll three more times", 20*time.Second, func() bool {
		return metricValue(t, a.s.m.cycles.WithLabelValues("page-urgent", "complete")) >= before+3
	})
	if polled(b) != 0 || b.el.Leader() {
		t.Fatalf("the follower polled while the leader was alive")
	}
	if _, err := b.s.RunOnce(t.Context()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower RunOnce: %v, want ErrNotLeader", err)
	}

	// The leader dies: its process stops polling and its connection is
	// killed on the server (no unlock, no goodbye), as when a host drops.
	if err := a.s.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	pgtest.KillLockHolder(t, a.st.LockKey())
	killed := time.Now()
	second := sim.Desk.AddTicket(sdsim.Ticket{Subject: "second", Priority: 4})
	waitFor(t, "the follower to take over", 30*time.Second, func() bool { return polled(b) > 0 && len(notif.forTicket(second.ID)) == 1 })
	// The follower asks every poll interval (1s): the take-over is bounded
	// by an interval and a cycle, give or take a loaded machine.
	took := time.Since(killed)
	t.Logf("take-over after %v", took.Round(time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("take-over took %v, want within a few poll intervals", took)
	}
	// The old leader's next check sees its connection gone and stops
	// leading; back on a new connection, it finds the lock taken.
	if err := a.el.IsLeader(t.Context()); err == nil || a.el.Leader() {
		t.Errorf("old leader with its connection killed: IsLeader = %v, Leader() = %v, want an error and false", err, a.el.Leader())
	}
	if err := a.el.IsLeader(t.Context()); !errors.Is(err, store.ErrNotLeader) {
		t.Errorf("old leader after the take-over: IsLeader = %v, want ErrNotLeader", err)
	}
	if !b.el.Leader() {
		t.Error("the new leader does not say so")
	}
	// More ticks of the new leader: no decision fires twice.
	before = metricValue(t, b.s.m.cycles.WithLabelValues("page-urgent", "complete"))
	waitFor(t, "the new leader to poll twice more", 20*time.Second, func() bool {
		return metricValue(t, b.s.m.cycles.WithLabelValues("page-urgent", "complete")) >= before+2
	})
	if n := len(notif.forTicket(first.ID)); n != 1 {
		t.Errorf("first ticket alerted %d times across the failover, want 1", n)
	}
	if n := len(notif.forTicket(second.ID)); n != 1 {
		t.Errorf("second ticket alerted %d times, want 1", n)
	}
}
