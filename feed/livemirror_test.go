package feed

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// slowStore is a MirrorStore whose writes (and, with reads, reads) wait
// while it is held, as the state store does while the feed's writes
// queue on SQLite's one connection; it counts the reads made of it.
type slowStore struct {
	MirrorStore
	mu        sync.Mutex
	held      chan struct{} // nil: not held; closed by release
	holdReads bool
	inApply   chan struct{} // receives when MirrorApply starts waiting
	reads     atomic.Int64
}

func (s *slowStore) hold(reads bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held, s.holdReads = make(chan struct{}), reads
	s.inApply = make(chan struct{}, 1)
}

func (s *slowStore) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.held)
	s.held = nil
}

func (s *slowStore) wait(ctx context.Context, apply bool) error {
	s.mu.Lock()
	h, in := s.held, s.inApply
	if !apply && !s.holdReads {
		h = nil
	}
	s.mu.Unlock()
	if h == nil {
		return nil
	}
	if apply {
		in <- struct{}{}
	}
	select {
	case <-h:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slowStore) MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error) {
	s.reads.Add(1)
	if err := s.wait(ctx, false); err != nil {
		return nil, err
	}
	return s.MirrorStore.MirrorStates(ctx)
}

func (s *slowStore) MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error) {
	s.reads.Add(1)
	if err := s.wait(ctx, false); err != nil {
		return nil, store.MirrorState{}, err
	}
	return s.MirrorStore.MirrorLoad(ctx, ws)
}

func (s *slowStore) MirrorApply(ctx context.Context, ws int64, put []*sdclient.Ticket, del []int64, st store.MirrorState) (int64, error) {
	if err := s.wait(ctx, true); err != nil {
		return 0, err
	}
	return s.MirrorStore.MirrorApply(ctx, ws, put, del, st)
}

// liveTicket finds ticket id in workspace 0 of m, reading it as people's
// commands do, within a second.
func liveTicket(t *testing.T, m *LiveMirror, id int64) *sdclient.Ticket {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := m.MirrorStates(ctx); err != nil {
		t.Fatalf("MirrorStates: %v", err)
	}
	tickets, _, err := m.MirrorLoad(ctx, 0)
	if err != nil {
		t.Fatalf("MirrorLoad: %v", err)
	}
	for _, tk := range tickets {
		if tk.ID == id {
			return tk
		}
	}
	t.Fatalf("the mirror does not hold ticket %d", id)
	return nil
}

// People read the mirror from the feed's memory while its replica leads:
// a read answers, and shows the feed's newest changes, while the feed's
// write to the store waits (the store is not read at all); a ticket
// deskbot changed for a person shows at once, reaches the rules' next
// snapshot and is saved with the next write. While another replica
// leads, people read the store.
func TestLiveMirrorNeverWaitsOnTheStore(t *testing.T) {
	slow := &slowStore{}
	var lead atomic.Bool
	lead.Store(true)
	e := newEnv(t, nil)
	slow.MirrorStore = e.st
	f := e.newFeed(clientDesk(e.client), WithMirrorStore(slow), WithLeads(lead.Load))
	urgent := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Server room flooding", Priority: 4, CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(-time.Hour)})
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer", Priority: 1, CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(-time.Hour)})
	e.sync(f)
	live := NewLiveMirror(slow)
	live.Attach(f)

	// The next sync's write to the store waits; the desk changed meanwhile.
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(urgent.ID, func(x *sdsim.Ticket) { x.Subject = "Server room flooded" })
	slow.hold(false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Sync(context.WithoutCancel(t.Context()), Inline())
	}()
	<-slow.inApply
	slow.reads.Store(0)
	if got := liveTicket(t, live, urgent.ID).Subject; got != "Server room flooded" {
		t.Errorf("while the store write waits, people read subject %q, want the synced %q", got, "Server room flooded")
	}

	// Alice assigns it to herself: the desk's answer goes into the mirror.
	alice := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", Email: "alice@example.com"})
	assigned, _, err := e.client.Tickets.Update(t.Context(), urgent.ID, &sdclient.TicketUpdate{ResponderID: &alice.ID})
	if err != nil {
		t.Fatal(err)
	}
	live.Observe(assigned)
	if got := liveTicket(t, live, urgent.ID).ResponderID; got == nil || *got != alice.ID {
		t.Errorf("right after the assignment people read responder %v, want %d", got, alice.ID)
	}
	// A ticket of a workspace deskbot does not poll stays out: the rules
	// must not act on it.
	foreign, ws := *assigned, int64(999)
	foreign.ID, foreign.WorkspaceID = 99999, &ws
	live.Observe(&foreign)
	if tickets, _, err := live.MirrorLoad(t.Context(), 0); err != nil || slices.ContainsFunc(tickets, func(x *sdclient.Ticket) bool { return x.ID == foreign.ID }) {
		t.Errorf("a ticket of workspace %d, not polled, went into the mirror (err %v)", ws, err)
	}
	if n := slow.reads.Load(); n != 0 {
		t.Errorf("people's reads read the store %d times while the feed led", n)
	}
	slow.release()
	<-done

	// The rules see the assignment before the change feed brings it.
	for _, tk := range f.Snapshot() {
		if tk.ID == urgent.ID && (tk.ResponderID == nil || *tk.ResponderID != alice.ID) {
			t.Errorf("the rules' mirror shows responder %v, want %d", tk.ResponderID, alice.ID)
		}
	}
	if err := f.Persist(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored, _, err := e.st.MirrorLoad(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range stored {
		if tk.ID == urgent.ID && (tk.ResponderID == nil || *tk.ResponderID != alice.ID) {
			t.Errorf("the stored mirror shows responder %v, want %d", tk.ResponderID, alice.ID)
		}
	}

	// Another replica leads: people read the store, which is slow now.
	lead.Store(false)
	slow.hold(true)
	defer slow.release()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := live.MirrorStates(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("not leading, MirrorStates = %v, want it to read the (held) store", err)
	}
	live.Observe(assigned) // nothing to take it in: no panic, no effect
}

// The versions LiveMirror gives change exactly when what it would load
// changes, also when it turns from the store to memory, so that the
// bot's cache reloads when it must and only then.
func TestLiveMirrorVersions(t *testing.T) {
	e := newEnv(t, nil)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer", Priority: 4, CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(-time.Hour)})
	e.sync(e.f)
	live := NewLiveMirror(e.st)
	version := func() int64 {
		t.Helper()
		st, err := live.MirrorStates(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return st[0].Version
	}
	fromStore := version()
	if again := version(); again != fromStore {
		t.Errorf("unchanged store: version %d then %d", fromStore, again)
	}
	live.Attach(e.f)
	fromMemory := version()
	if fromMemory == fromStore {
		t.Errorf("turning from the store to memory kept version %d: a cache would not reload", fromMemory)
	}
	if again := version(); again != fromMemory {
		t.Errorf("unchanged memory: version %d then %d", fromMemory, again)
	}
	read, _, err := e.client.Tickets.Get(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(tk.ID, func(x *sdsim.Ticket) { x.Subject = "Printer fixed" })
	updated, _, err := e.client.Tickets.Get(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	live.Observe(updated)
	changed := version()
	if changed == fromMemory {
		t.Errorf("a ticket taken in kept version %d", changed)
	}
	live.Observe(read) // older than what the mirror holds: no change
	if again := version(); again != changed {
		t.Errorf("an older copy changed the version from %d to %d", changed, again)
	}
	if got := liveTicket(t, live, tk.ID).Subject; got != "Printer fixed" {
		t.Errorf("after an older copy, subject %q, want %q", got, "Printer fixed")
	}
}
