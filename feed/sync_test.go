package feed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// recSubscriber records what the feed published.
type recSubscriber struct {
	mu  sync.Mutex
	got []Changes
}

func (r *recSubscriber) FeedChanged(_ context.Context, c Changes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, c)
}

func (r *recSubscriber) last(t *testing.T) Changes {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		t.Fatal("the subscriber heard of no sync")
	}
	return r.got[len(r.got)-1]
}

func addTickets(d *sdsim.Desk, n, priority int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = d.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: priority}).ID
	}
	return out
}

// TestFeedManyChangesInOneSecond: more than a page of tickets changed
// within one second (a bulk update); the feed pages by number within the
// second, mirrors every one of them and tells the subscribers, at a few
// requests.
func TestFeedManyChangesInOneSecond(t *testing.T) {
	sub := &recSubscriber{}
	e := newEnv(t, nil, WithSubscriber(sub))
	changed := addTickets(e.sim.Desk, 250, 1)
	e.sync(e.f)
	e.clk.Advance(time.Minute)
	for _, id := range changed {
		e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Priority = 4 })
	}
	e.sim.Desk.ResetRequests()
	res := e.sync(e.f)
	if res.Changed != 250 || !slices.Equal(ids(res.ChangedTickets), changed) {
		t.Fatalf("sync changed %d tickets (%d listed), want all 250", res.Changed, len(res.ChangedTickets))
	}
	if c := sub.last(t); !c.Complete || !slices.Equal(ids(c.Tickets), changed) {
		t.Errorf("the subscriber heard of %d tickets (complete %v), want the 250 changed", len(c.Tickets), c.Complete)
	}
	for id, tk := range mirrored(e.f) {
		if tk.Priority != 4 {
			t.Fatalf("ticket %d mirrored with priority %d, want 4", id, tk.Priority)
		}
	}
	feed := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets", map[string]string{"filter": "", "order_by": "updated_at", "order_type": "asc"})
	if feed > 4 || res.Requests != feed {
		t.Errorf("%d feed requests (the sync counted %d) for 250 changes in one second, want at most 4", feed, res.Requests)
	}
}

// unorderedDesk answers the change feed newest first, whatever order_by
// says (a desk that ignores it).
type unorderedDesk struct{ Desk }

func (d unorderedDesk) ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error) {
	o := *opts
	if o.OrderBy == "updated_at" {
		o.OrderType = "desc"
	}
	return d.Desk.ListTickets(ctx, &o)
}

// TestFeedOnADeskThatIgnoresOrder: the feed pages by number to the end and
// takes the newest updated_at of the whole answer as its cursor; every
// change arrives once, and the next sync asks from the new cursor.
func TestFeedOnADeskThatIgnoresOrder(t *testing.T) {
	e := newEnv(t, nil)
	reg := prometheus.NewRegistry()
	f := e.newFeed(unorderedDesk{clientDesk(e.client)}, WithRegistry(reg))
	changed := addTickets(e.sim.Desk, 230, 1)
	e.sync(f)
	for i, id := range changed {
		if i%2 == 0 {
			e.clk.Advance(time.Second)
		}
		e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Priority = 4 })
	}
	e.clk.Advance(time.Minute)
	res := e.sync(f)
	if !slices.Equal(ids(res.ChangedTickets), changed) {
		t.Fatalf("sync changed %d tickets, want each of the 230 once", len(res.ChangedTickets))
	}
	if got := counted(t, reg, "deskbot_mirror_feed_unordered_total"); got < 1 {
		t.Errorf("unordered feed metric = %v", got)
	}
	e.clk.Advance(time.Minute)
	if res := e.sync(f); res.Decoded != 0 {
		t.Errorf("a quiet sync decoded %d tickets, want none: the cursor did not move to the newest change", res.Decoded)
	}
}

// TestDeletedAndSpamTicketsLeaveTheMirror: soft-deleted and spam tickets
// vanish from the change feed; the sweep finds them without re-reading
// them, they leave the mirror (Gone), and a restored one comes back.
func TestDeletedAndSpamTicketsLeaveTheMirror(t *testing.T) {
	e := newEnv(t, nil, WithTrashEvery(5*time.Minute))
	del := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "del", Priority: 4})
	spam := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "spam", Priority: 4})
	keep := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "keep", Priority: 4})
	e.sync(e.f)
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(del.ID, func(x *sdsim.Ticket) { x.Deleted = true })
	e.sim.Desk.UpdateTicket(spam.ID, func(x *sdsim.Ticket) { x.Spam = true })
	var removed []int64
	for range 6 {
		e.clk.Advance(time.Minute)
		e.sim.Desk.ResetRequests()
		removed = append(removed, e.sync(e.f).RemovedIDs...)
		if n := e.sim.Desk.RequestsTo("GET", fmt.Sprintf("/api/v2/tickets/%d", del.ID), nil); n != 0 {
			t.Errorf("the deleted ticket was re-read %d times", n)
		}
	}
	slices.Sort(removed)
	if !slices.Equal(removed, []int64{del.ID, spam.ID}) {
		t.Errorf("removed %v, want the deleted and the spam ticket (%d, %d)", removed, del.ID, spam.ID)
	}
	if !e.f.Gone(del.ID) || !e.f.Gone(spam.ID) || e.f.Gone(keep.ID) {
		t.Errorf("gone: deleted %v, spam %v, kept %v", e.f.Gone(del.ID), e.f.Gone(spam.ID), e.f.Gone(keep.ID))
	}
	if st := e.f.Status(); st[0].Tickets != 1 {
		t.Errorf("mirror holds %d tickets, want only #%d", st[0].Tickets, keep.ID)
	}
	// Restored: back in the feed.
	e.sim.Desk.UpdateTicket(del.ID, func(x *sdsim.Ticket) { x.Deleted = false })
	e.clk.Advance(time.Minute)
	if res := e.sync(e.f); !slices.Equal(ids(res.ChangedTickets), []int64{del.ID}) || e.f.Gone(del.ID) {
		t.Errorf("restored ticket: changed %v, gone %v", ids(res.ChangedTickets), e.f.Gone(del.ID))
	}
}

// TestANewLeaderContinuesFromTheStoredMirror: a second feed on the same
// store (a restart, or another replica taking over) starts from the
// stored mirror and cursor: no full sync, only the changes since. When
// the first one syncs again, it reloads what the other changed.
func TestANewLeaderContinuesFromTheStoredMirror(t *testing.T) {
	e := newEnv(t, nil)
	addTickets(e.sim.Desk, 100, 1)
	for range 2 { // the full sync, and a sync whose cursor passes the tickets' creation
		e.sync(e.f)
		e.clk.Advance(time.Minute)
	}
	f2 := e.newFeed(clientDesk(e.client), WithMirrorStore(testkit.Store(t, e.stPath)))
	urgent := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "urgent", Priority: 4})
	e.sim.Desk.ResetRequests()
	res := e.sync(f2)
	if res.Tickets != 101 || !slices.Contains(ids(res.ChangedTickets), urgent.ID) {
		t.Fatalf("new leader: %d tickets, changed %v; want 101 with #%d", res.Tickets, ids(res.ChangedTickets), urgent.ID)
	}
	if n := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets/filter", nil); n != 0 {
		t.Errorf("the new leader ran a full sync (%d filter searches)", n)
	}
	if res.Decoded > 2 {
		t.Errorf("the new leader's feed decoded %d tickets, want only the new one", res.Decoded)
	}
	// The first feed leads again: it reloads the mirror the other wrote.
	e.clk.Advance(time.Minute)
	e.sim.Desk.ResetRequests()
	res = e.sync(e.f)
	if _, ok := mirrored(e.f)[urgent.ID]; !ok || res.Tickets != 101 {
		t.Errorf("old leader again: %d tickets, #%d mirrored %v; want the other's write reloaded", res.Tickets, urgent.ID, ok)
	}
	if n := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets/filter", nil); n != 0 {
		t.Errorf("the old leader ran a full sync (%d filter searches)", n)
	}
}

// TestFirstSyncInTheBackground: without Inline, the first sync starts the
// full sync in the background and says so (ErrFirstSync, incomplete);
// once it is done, WithFirstSynced hears of it and the next sync is
// complete. Every request a sync sends is counted as it goes.
func TestFirstSyncInTheBackground(t *testing.T) {
	var wg sync.WaitGroup
	defer wg.Wait()
	synced := make(chan struct{}, 1)
	e := newEnv(t, nil,
		WithBackground(func(run func(context.Context)) {
			wg.Add(1)
			go func() { defer wg.Done(); run(t.Context()) }()
		}),
		WithFirstSynced(func(context.Context) { synced <- struct{}{} }))
	addTickets(e.sim.Desk, 40, 1)
	first := e.f.Sync(t.Context())
	if first.Complete || !errors.Is(first.Err, ErrFirstSync) {
		t.Fatalf("first sync: complete %v, err %v; want incomplete for the first full sync", first.Complete, first.Err)
	}
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		t.Fatal("WithFirstSynced's function was not called")
	}
	wg.Wait()
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(7, func(x *sdsim.Ticket) { x.Priority = 4 })
	e.sim.Desk.ResetRequests()
	counted := 0
	res := e.f.Sync(t.Context(), Count(func(resp *sdclient.Response, err error) { counted += max(resp.Attempts, 1) }))
	if !res.Complete || res.Tickets != 40 || !slices.Equal(ids(res.ChangedTickets), []int64{7}) {
		t.Fatalf("after the background sync: complete %v (%v), %d tickets, changed %v", res.Complete, res.Err, res.Tickets, ids(res.ChangedTickets))
	}
	if sent := len(e.sim.Desk.Requests()); counted != sent || res.Requests != sent {
		t.Errorf("counted %d requests, Requests %d, the desk saw %d", counted, res.Requests, sent)
	}
}

// TestOwnWritesReachTheMirror: a ticket deskbot read or changed goes into
// the mirror at once (Observe), Persist saves it, Forget removes it.
func TestOwnWritesReachTheMirror(t *testing.T) {
	e := newEnv(t, nil)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer", Priority: 1})
	e.sync(e.f)
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(tk.ID, func(x *sdsim.Ticket) { x.Priority = 3 })
	read, _, err := e.client.Tickets.Get(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.f.Observe(read)
	if got := e.f.Tickets([]int64{tk.ID})[tk.ID]; got == nil || got.Priority != 3 {
		t.Fatalf("after Observe the mirror holds %+v, want priority 3", got)
	}
	if err := e.f.Persist(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored, _, err := e.st.MirrorLoad(t.Context(), 0)
	if err != nil || len(stored) != 1 || stored[0].Priority != 3 {
		t.Fatalf("stored mirror %v (%v), want the observed ticket", stored, err)
	}
	e.f.Forget(tk.ID)
	if err := e.f.Persist(t.Context()); err != nil {
		t.Fatal(err)
	}
	if stored, _, _ := e.st.MirrorLoad(t.Context(), 0); len(stored) != 0 || !e.f.Gone(tk.ID) || len(e.f.Snapshot()) != 0 {
		t.Errorf("after Forget: stored %d tickets, gone %v, %d mirrored; want it gone", len(stored), e.f.Gone(tk.ID), len(e.f.Snapshot()))
	}
}
