package oncall_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/oncall"
)

// groupPager is a fakePager that also groups: each PageGroup call is
// recorded as the tickets it named; groupFail, when set, decides the
// result of each member.
type groupPager struct {
	fakePager
	gmu       sync.Mutex
	groups    [][]int64
	groupFail func(oncall.PageRequest) error
}

func (g *groupPager) PageGroup(_ context.Context, rs []oncall.PageRequest) []error {
	g.gmu.Lock()
	defer g.gmu.Unlock()
	ids := make([]int64, len(rs))
	errs := make([]error, len(rs))
	for i, r := range rs {
		ids[i] = r.TicketID
		if g.groupFail != nil {
			errs[i] = g.groupFail(r)
		}
	}
	g.groups = append(g.groups, ids)
	return errs
}

func (g *groupPager) groupSizes() []int {
	return mapLocked(&g.gmu, func() [][]int64 { return g.groups }, func(ids []int64) int { return len(ids) })
}

func newGroupRig(t *testing.T, opts ...oncall.Option) (*oncall.Escalator, *groupPager, *oncall.MemStore) {
	t.Helper()
	st := &oncall.MemStore{}
	gp := &groupPager{}
	esc, err := oncall.NewEscalator(mustParse(t, fixture(t, "escalator.yaml")), st, gp, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return esc, gp, st
}

// startDeferred starts n pages (tickets 1..n) without their first step.
func startDeferred(t *testing.T, esc *oncall.Escalator, n, groupOver int) {
	t.Helper()
	for id := int64(1); id <= int64(n); id++ {
		spec := oncall.PageSpec{Rule: "r", TicketID: id, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall",
			Text: fmt.Sprintf("Urgent #%d", id), GroupOver: groupOver, Defer: true}
		p, created, err := esc.Start(t.Context(), spec, t0)
		if err != nil || !created || p.Step != 0 {
			t.Fatalf("deferred start of #%d: %+v %v %v", id, p, created, err)
		}
	}
}

// More than group_over steps to one person in one tick go out as one
// PageGroup; each page still takes its own step and escalates on its own;
// the next level (one person again) is grouped too, the group level is not
// (a group is mentioned on each card, no DM).
func TestTickGroupsStepsToOnePerson(t *testing.T) {
	esc, gp, _ := newGroupRig(t)
	startDeferred(t, esc, 7, 0)
	if got := gp.sent(); len(got) != 0 {
		t.Fatalf("deferred Start paged: %q", got)
	}
	st, err := esc.Tick(t.Context(), t0)
	if err != nil || st.Paged != 7 {
		t.Fatalf("tick: %+v %v", st, err)
	}
	if got := gp.groupSizes(); len(got) != 1 || got[0] != 7 || len(gp.sent()) != 0 {
		t.Fatalf("groups %v, single pages %q; want one group of 7", got, gp.sent())
	}
	for id := int64(1); id <= 7; id++ {
		p, _, _ := esc.Page(t.Context(), oncall.PageKey("r", id, 1))
		if p.Step != 1 || p.Sending || !p.NextAt.Equal(t0.Add(10*time.Minute)) {
			t.Fatalf("page #%d after the grouped step: step %d sending %v next %v", id, p.Step, p.Sending, p.NextAt)
		}
	}
	// Ticket 3 is acknowledged: the next level pages boss for 6 tickets.
	if _, ok, err := esc.Ack(t.Context(), oncall.PageKey("r", 3, 1), "alice@example.com", t0.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("ack: %v %v", ok, err)
	}
	if _, err := esc.Tick(t.Context(), t0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := gp.groupSizes(); len(got) != 2 || got[1] != 6 {
		t.Fatalf("groups after level 2: %v, want [7 6]", got)
	}
	// Level 3 is a user group: one Page per card.
	if _, err := esc.Tick(t.Context(), t0.Add(25*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := gp.groupSizes(); len(got) != 2 || len(gp.sent()) != 6 {
		t.Fatalf("groups %v, single pages %d after the group level; want no new group and 6 pages", got, len(gp.sent()))
	}
}

// group_over or fewer steps to one person are sent one by one; the page's
// own group_over (its rule's) is the threshold when smaller than the
// escalator's.
func TestTickGroupThreshold(t *testing.T) {
	esc, gp, _ := newGroupRig(t)
	startDeferred(t, esc, 5, 0)
	if _, err := esc.Tick(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	if len(gp.groupSizes()) != 0 || len(gp.sent()) != 5 {
		t.Fatalf("5 pages (group_over 5): groups %v, single %d; want 5 single", gp.groupSizes(), len(gp.sent()))
	}

	esc, gp, _ = newGroupRig(t)
	startDeferred(t, esc, 3, 2)
	if _, err := esc.Tick(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	if got := gp.groupSizes(); len(got) != 1 || got[0] != 3 {
		t.Fatalf("3 pages of a rule with group_over 2: groups %v, want [3]", got)
	}

	esc, gp, _ = newGroupRig(t)
	startDeferred(t, esc, 7, 10) // the rule's group_over, above the escalator's
	if _, err := esc.Tick(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	if len(gp.groupSizes()) != 0 || len(gp.sent()) != 7 {
		t.Fatalf("7 pages of a rule with group_over 10: groups %v, single %d", gp.groupSizes(), len(gp.sent()))
	}

	esc, gp, _ = newGroupRig(t, oncall.WithGroupOver(10))
	startDeferred(t, esc, 7, 0)
	if _, err := esc.Tick(t.Context(), t0); err != nil {
		t.Fatal(err)
	}
	if len(gp.groupSizes()) != 0 || len(gp.sent()) != 7 {
		t.Fatalf("7 pages, group_over 10: groups %v, single %d", gp.groupSizes(), len(gp.sent()))
	}
	if _, err := oncall.NewEscalator(nil, &oncall.MemStore{}, gp, nil, oncall.WithGroupOver(0)); err == nil {
		t.Fatal("group_over 0 accepted")
	}
}

// Each member of a group has its own outcome: one refused is retried (as a
// step that may have reached the person: Retry), one unreachable moves on
// to the next level at once, the others are sent.
func TestTickGroupMemberOutcomes(t *testing.T) {
	esc, gp, _ := newGroupRig(t, oncall.WithRetry(30*time.Second))
	gp.groupFail = func(r oncall.PageRequest) error {
		switch r.TicketID {
		case 2:
			return errors.New("card refused")
		case 4:
			return fmt.Errorf("nobody: %w", oncall.ErrUnreachable)
		}
		return nil
	}
	startDeferred(t, esc, 7, 0)
	st, err := esc.Tick(t.Context(), t0)
	if err == nil || st.Paged != 6 || st.Failed != 2 {
		t.Fatalf("tick: %+v %v; want 5 grouped sent, 1 next level sent, 2 failed", st, err)
	}
	p2, _, _ := esc.Page(t.Context(), oncall.PageKey("r", 2, 1))
	if !p2.Sending || p2.Step != 1 || !p2.NextAt.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("refused member: %+v", p2)
	}
	p4, _, _ := esc.Page(t.Context(), oncall.PageKey("r", 4, 1))
	if p4.Step != 2 || p4.Target == nil || p4.Target.ID != "boss@example.com" {
		t.Fatalf("unreachable member: step %d target %+v, want level 2 (boss) at once", p4.Step, p4.Target)
	}
	gp.groupFail = nil
	if _, err := esc.Tick(t.Context(), t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	got := gp.sent()
	if len(got) != 2 || got[1] != "r/2/1 step 1 L1 R1 alice@example.com" {
		t.Fatalf("single pages: %q; want boss for #4, then the retry of #2 alone", got)
	}
	gp.mu.Lock()
	retry := gp.reqs[1].Retry
	gp.mu.Unlock()
	if !retry {
		t.Fatal("the retried member's step is not marked Retry")
	}
}

// A process that dies after claiming a group's steps (the message may or
// may not have gone out) leaves them claimed; when the claims run out the
// steps are taken again, together, each marked Retry so that the chat
// looks for the message before sending it.
func TestTickGroupTakenOverAfterCrash(t *testing.T) {
	esc, gp, st := newGroupRig(t)
	startDeferred(t, esc, 6, 0)
	// The dying process claims the steps; the answer never reaches the store.
	for _, p := range mustDue(t, st) {
		q := p.Clone()
		pol := esc.Config().Policy(q.Policy)
		if _, ok := q.Advance(pol, t0); !ok {
			t.Fatal("no step")
		}
		q.Claim(t0.Add(2 * time.Minute))
		if won, err := st.SwapPage(t.Context(), q); !won || err != nil {
			t.Fatal(won, err)
		}
	}
	if _, err := esc.Tick(t.Context(), t0.Add(time.Minute)); err != nil || len(gp.groupSizes()) != 0 {
		t.Fatalf("claims taken over early: %v %v", gp.groupSizes(), err)
	}
	var retried int
	gp.groupFail = func(r oncall.PageRequest) error {
		if r.Retry && r.Step == 1 {
			retried++
		}
		return nil
	}
	if _, err := esc.Tick(t.Context(), t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := gp.groupSizes(); len(got) != 1 || got[0] != 6 || retried != 6 {
		t.Fatalf("takeover: groups %v, retried %d; want one group of 6, all Retry", got, retried)
	}
}

func mustDue(t *testing.T, st *oncall.MemStore) []oncall.Page {
	t.Helper()
	due, err := st.DuePages(t.Context(), t0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return due
}
