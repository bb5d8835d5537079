package scheduler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// recSubscriber is a feed.Subscriber that records the changes it is told.
type recSubscriber struct {
	mu   sync.Mutex
	told []feed.Changes
}

func (r *recSubscriber) FeedChanged(_ context.Context, c feed.Changes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told = append(r.told, c)
}

// last is the ids of the last changes told, and whether they were
// complete.
func (r *recSubscriber) last(t *testing.T) ([]int64, bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.told) == 0 {
		t.Fatal("the subscriber was told nothing")
	}
	c := r.told[len(r.told)-1]
	var ids []int64
	for _, tk := range c.Tickets {
		ids = append(ids, tk.ID)
	}
	slices.Sort(ids)
	return ids, c.Complete
}

// After each sync the subscribers are told the tickets the feed saw
// change, deleted and spam ones left out, and whether the sync was
// complete; a sync that saw no change tells none.
func TestSubscriberToldChanges(t *testing.T) {
	sub := &recSubscriber{}
	e := newEnv(t, vipRules, WithSubscriber(sub))
	e.runOnce()
	e.clk.Advance(time.Minute)
	a := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 2}).ID
	b := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "b", Priority: 2}).ID
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "spam", Priority: 2, Spam: true})
	e.runOnce()
	if ids, complete := sub.last(t); !slices.Equal(ids, []int64{a, b}) || !complete {
		t.Fatalf("told %v (complete %v); want %v, complete", ids, complete, []int64{a, b})
	}
	e.clk.Advance(time.Minute)
	e.runOnce()
	if ids, _ := sub.last(t); len(ids) != 0 {
		t.Fatalf("a sync without changes told %v", ids)
	}
}

// recTicker is a cycle.TickFollower due at a given time.
type recTicker struct {
	mu    sync.Mutex
	at    time.Time
	ticks []cycle.Tick
}

func (r *recTicker) Due(_ *rules.Set, now time.Time) bool { return !now.Before(r.at) }

func (r *recTicker) FollowTick(_ context.Context, t cycle.Tick) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks = append(r.ticks, t)
}

// yearlyRules has one rule that is due once a year: its ticks are idle.
const yearlyRules = `version: 1
rules:
  - name: yearly
    query: "priority:4"
    cron: "0 0 1 1 *"
    actions: [{note: "happy new year"}]
`

// A tick follower runs after the sync, over the mirror, with the rules'
// runs; a scheduled tick with no rule due is skipped as idle unless the
// follower has work.
func TestTickFollowerKeepsTickRunning(t *testing.T) {
	tk := &recTicker{at: t0.Add(90 * time.Second)}
	e := newEnv(t, yearlyRules, WithTickFollower(tk))
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 2}).ID
	if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "idle" {
		t.Fatalf("a tick with nothing due: skipped %q, want idle", c.Skipped)
	}
	if len(tk.ticks) != 0 {
		t.Fatalf("an idle tick was followed: %+v", tk.ticks)
	}
	e.clk.Advance(2 * time.Minute) // the follower has work
	if c := e.s.runCycle(t.Context(), scheduled); c.Skipped != "" {
		t.Fatalf("skipped %q, want the tick to run for its follower", c.Skipped)
	}
	e.s.inflight.Wait() // the first full sync, and the cycle it kicks
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if len(tk.ticks) == 0 {
		t.Fatal("the tick ran without its follower")
	}
	last := tk.ticks[len(tk.ticks)-1]
	if len(last.Tickets) != 1 || last.Tickets[0].ID != id || last.Runs == nil || last.People == nil {
		t.Fatalf("last tick %+v; want the mirror (ticket %d), the runs and the names", last, id)
	}
}
