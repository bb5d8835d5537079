package storetest

import (
	"sync/atomic"
	"testing"

	"github.com/deskbot/deskbot/store"
)

// testThreads checks the live-thread links: the first link of a ticket
// wins, a thread belongs to one ticket, lookups both ways, the
// compare-and-swap of the posted mark (one winner among replicas, durable
// across a reopen) and the once-only edits notice.
func testThreads(t *testing.T, open Open) {
	t.Run("LinkFirstWins", func(t *testing.T) { testThreadLink(t, open) })
	t.Run("ThreadsOfMany", func(t *testing.T) { testThreadsOf(t, open) })
	t.Run("AdvanceOneWinner", func(t *testing.T) { testThreadAdvance(t, open) })
	t.Run("EditsNotedOnce", func(t *testing.T) { testThreadEdits(t, open) })
}

func link(t *testing.T, s *store.Store, id int64, ch, ts string) bool {
	t.Helper()
	ok, err := s.LinkThread(t.Context(), id, ch, ts)
	if err != nil {
		t.Fatalf("LinkThread(%d, %s, %s): %v", id, ch, ts, err)
	}
	return ok
}

func testThreadLink(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if !link(t, s, 7, "C1", "100.1") {
		t.Fatal("first link of ticket 7 refused")
	}
	if link(t, s, 7, "C2", "200.2") {
		t.Error("second link of ticket 7 accepted; the first must win")
	}
	if link(t, s, 8, "C1", "100.1") {
		t.Error("thread C1/100.1 linked to a second ticket")
	}
	l, ok, err := s.ThreadOf(ctx, 7)
	if err != nil || !ok || l.Channel != "C1" || l.ThreadTS != "100.1" || l.Posted != (store.ThreadMark{}) || l.EditsNoted || l.LinkedAt.IsZero() {
		t.Errorf("ThreadOf(7) = %+v, %v, %v", l, ok, err)
	}
	l, ok, err = s.ThreadTicket(ctx, "C1", "100.1")
	if err != nil || !ok || l.TicketID != 7 {
		t.Errorf("ThreadTicket(C1, 100.1) = %+v, %v, %v; want ticket 7", l, ok, err)
	}
	if _, ok, err := s.ThreadTicket(ctx, "C1", "999.9"); err != nil || ok {
		t.Errorf("ThreadTicket of an unlinked thread = %v, %v", ok, err)
	}
	if _, ok, err := s.ThreadOf(ctx, 8); err != nil || ok {
		t.Errorf("ThreadOf(8) = %v, %v; want none", ok, err)
	}
	for _, bad := range []struct {
		id     int64
		ch, ts string
	}{{0, "C1", "1.1"}, {9, "", "1.1"}, {9, "C1", " "}} {
		if _, err := s.LinkThread(ctx, bad.id, bad.ch, bad.ts); err == nil {
			t.Errorf("LinkThread(%d, %q, %q) accepted", bad.id, bad.ch, bad.ts)
		}
	}
	// Durable: another Store on the database sees it after a close.
	do(t, s.Close())
	s = open(t)
	if l, ok, err := s.ThreadOf(ctx, 7); err != nil || !ok || l.ThreadTS != "100.1" {
		t.Errorf("ThreadOf(7) after reopen = %+v, %v, %v", l, ok, err)
	}
}

func testThreadsOf(t *testing.T, open Open) {
	s := open(t)
	ids := make([]int64, 0, 1200)
	for i := int64(1); i <= 1200; i++ {
		ids = append(ids, i)
		if i%100 == 0 {
			link(t, s, i, "C1", string(rune('a'+i/100)))
		}
	}
	got, err := s.ThreadsOf(t.Context(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 12 || got[700].TicketID != 700 || got[1200].Channel != "C1" {
		t.Errorf("ThreadsOf(1..1200) = %d links (%+v); want the 12 linked", len(got), got[700])
	}
	if got, err := s.ThreadsOf(t.Context(), nil); err != nil || len(got) != 0 {
		t.Errorf("ThreadsOf(nil) = %v, %v", got, err)
	}
}

func testThreadAdvance(t *testing.T, open Open) {
	ss := replicas(t, open, 4)
	ctx := t.Context()
	link(t, ss[0], 5, "C1", "1.5")
	from, to := store.ThreadMark{}, store.ThreadMark{ConvID: 40, Status: 2}
	var wins atomic.Int32
	race(len(ss), func(i int) {
		ok, err := ss[i].AdvanceThread(ctx, 5, from, to)
		if err != nil {
			t.Error(err)
		}
		if ok {
			wins.Add(1)
		}
	})
	if wins.Load() != 1 {
		t.Fatalf("%d replicas advanced the same mark; want exactly 1", wins.Load())
	}
	if ok, err := ss[1].AdvanceThread(ctx, 5, from, to); err != nil || ok {
		t.Errorf("a stale advance won: %v, %v", ok, err)
	}
	do(t, ss[0].Close())
	s := open(t)
	if l, _, _ := s.ThreadOf(ctx, 5); l.Posted != to {
		t.Errorf("mark after reopen = %+v; want %+v", l.Posted, to)
	}
	if ok, err := s.AdvanceThread(ctx, 6, from, to); err != nil || ok {
		t.Errorf("advance of an unlinked ticket = %v, %v", ok, err)
	}
}

func testThreadEdits(t *testing.T, open Open) {
	s := open(t)
	link(t, s, 3, "C1", "3.3")
	for i, want := range []bool{true, false, false} {
		if got, err := s.NoteThreadEdits(t.Context(), 3); err != nil || got != want {
			t.Errorf("NoteThreadEdits #%d = %v, %v; want %v", i+1, got, err, want)
		}
	}
	if l, _, _ := s.ThreadOf(t.Context(), 3); !l.EditsNoted {
		t.Error("EditsNoted not kept")
	}
}
