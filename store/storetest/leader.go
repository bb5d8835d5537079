package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// leaderTests: leadership epochs (fencing tokens) and the claims they make
// (issue 22).
var leaderTests = []struct {
	name string
	fn   func(t *testing.T, open Open)
}{
	{"LeaderEpochTakesOverAtOnce", testEpochTakeover},
	{"LeaderEpochKeepsReleaseTime", testEpochRelease},
	{"LeaderGoneClaimsNothing", testLeaderGone},
}

// lead makes s's process the scheduler leader of its state and gives the
// leadership up when t ends.
func lead(t *testing.T, s *store.Store) *store.Leadership {
	t.Helper()
	l, err := s.Leadership(t.Context(), nil)
	if err != nil {
		t.Fatalf("Leadership: %v", err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	if err := l.IsLeader(t.Context()); err != nil || !l.Leader() || l.Epoch() == 0 {
		t.Fatalf("IsLeader = %v, Leader %v, epoch %d; want the leadership in an epoch", err, l.Leader(), l.Epoch())
	}
	return l
}

// leaderMidFiring opens a store that leads and has begun the firing of
// key (its first claim, one action done).
func leaderMidFiring(t *testing.T, open Open, key rules.FiringKey) (*store.Store, *store.Leadership, rules.Firing) {
	t.Helper()
	s := open(t)
	l := lead(t, s)
	f := begun(t, s, key, episode)
	mustWin(t, f, 1, 1, false, nil)
	return s, l, f
}

// A leader dies with a firing half done (its lease has most of its two
// minutes to run). The next leader gains a newer epoch and takes the
// firing over at once, with its done actions, instead of waiting out the
// lease; the ledger shows it eligible at once, and then held by the new
// leader's lease.
func testEpochTakeover(t *testing.T, open Open) {
	key := rules.FiringKey{Rule: "page", TicketID: 5}
	_, la, f := leaderMidFiring(t, open, key)
	first := la.Epoch()
	do(t, la.Close(t.Context())) // the process dies

	b := open(t)
	lb := lead(t, b)
	if lb.Epoch() != first+1 {
		t.Fatalf("the next leader's epoch is %d, want %d", lb.Epoch(), first+1)
	}
	at := t0.Add(10 * time.Second)
	if fi := state(t, b, key); !fi.LeaseUntil.IsZero() || !episode.MayFire(fi, at) {
		t.Errorf("the dead leader's claim as the new leader reads it: %+v; want no lease, eligible at once", fi)
	}
	if fs, err := b.FiringStates(t.Context(), key.Rule, []int64{key.TicketID}); err != nil || !episode.MayFire(fs[key.TicketID], at) {
		t.Errorf("FiringStates = %+v, %v; want the dead leader's claim eligible at once", fs, err)
	}
	g := claim(t, b, key, episode, at)
	mustWin(t, g, 1, 1, true, []int{0})
	if g.ID != f.ID {
		t.Errorf("took over firing %d, want %d", g.ID, f.ID)
	}
	// The take-over is the new leader's own claim now: its lease holds.
	if fi := state(t, b, key); !fi.LeaseUntil.Equal(at.Add(lease)) {
		t.Errorf("after the take-over: %+v; want a lease until %v", fi, at.Add(lease))
	}
	mustLose(t, claim(t, b, key, episode, at.Add(time.Second)))
	do(t, b.Finish(t.Context(), g.ID, at.Add(time.Second)))
	if fi := state(t, b, key); fi.State != rules.FiringDone || fi.Attempts != 2 {
		t.Errorf("after Finish: %+v; want done after 2 attempts", fi)
	}
}

// A claim released until a retry time (waiting for the budget, a
// back-off) keeps that time under a new leader: the release was decided,
// not left behind by a crash.
func testEpochRelease(t *testing.T, open Open) {
	a := open(t)
	la := lead(t, a)
	key := rules.FiringKey{Rule: "digest", TicketID: 6}
	f := claim(t, a, key, episode, t0)
	retry := t0.Add(5 * time.Minute)
	do(t, a.Release(t.Context(), f.ID, retry, "budget spent"))
	do(t, la.Close(t.Context()))

	b := open(t)
	lead(t, b)
	mustLose(t, claim(t, b, key, episode, t0.Add(time.Minute)))
	mustWin(t, claim(t, b, key, episode, retry), 1, 1, true, nil)
}

// A process that gave the leadership up (or lost it) claims nothing and
// records no more actions: its next write learns it. The next leader
// finishes the firing it left.
func testLeaderGone(t *testing.T, open Open) {
	key := rules.FiringKey{Rule: "r", TicketID: 1}
	a, la, f := leaderMidFiring(t, open, key)
	do(t, la.Close(t.Context()))
	_, err := a.Claim(t.Context(), rules.FiringKey{Rule: "r", TicketID: 2}, episode, t0, lease)
	if !errors.Is(err, store.ErrNotLeader) {
		t.Fatalf("claim after the leadership was given up: %v, want ErrNotLeader", err)
	}
	if err := a.ActionDone(t.Context(), f.ID, 1); !errors.Is(err, store.ErrNotLeader) {
		t.Fatalf("ActionDone after the leadership was given up: %v, want ErrNotLeader", err)
	}
	b := open(t)
	lead(t, b)
	mustWin(t, claim(t, b, key, episode, t0.Add(time.Second)), 1, 1, true, []int{0})
	if la.Leader() || la.IsLeader(t.Context()) == nil {
		t.Errorf("Leader() = %v after Close; want false and IsLeader refusing", la.Leader())
	}
}
