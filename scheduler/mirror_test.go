package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// TestUrgentOnABusyDeskAlertsWithinTwoIntervals: on a desk of 10,000 open
// tickets, one ticket turns urgent; the scheduled cycles (a minute apart,
// as gocron ticks them) alert within two intervals of the rule, and a
// cycle costs a handful of requests, not a walk through the desk.
func TestUrgentOnABusyDeskAlertsWithinTwoIntervals(t *testing.T) {
	e := newEnv(t, urgentRules)
	for i := range 10000 {
		at := t0.Add(-time.Duration(10000-i) * time.Second)
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 1 + i%3, CreatedAt: at, UpdatedAt: at})
	}
	if c, err := e.s.RunCycle(t.Context()); err != nil || !c.Sync.Complete || c.Sync.Tickets != 10000 {
		t.Fatalf("first cycle: %+v %v", c.Sync, err)
	}
	for range 3 { // quiet minutes
		e.clk.Advance(time.Minute)
		e.s.runCycle(t.Context(), scheduled)
	}
	e.clk.Advance(17 * time.Second)
	changed := e.clk.Now()
	e.sim.Desk.UpdateTicket(4242, func(x *sdsim.Ticket) { x.Priority = 4 })
	e.sim.Desk.ResetRequests()
	var alertedAt time.Time
	for range 2 {
		e.clk.Advance(time.Minute - 17*time.Second)
		c := e.s.runCycle(t.Context(), scheduled)
		if c.Skipped != "" {
			t.Fatalf("scheduled cycle skipped: %q", c.Skipped)
		}
		if c.Requests > 4 {
			t.Errorf("a cycle sent %d requests, want the feed, the re-read and the note (at most 4)", c.Requests)
		}
		if len(e.notif.forTicket(4242)) > 0 {
			alertedAt = e.clk.Now()
			break
		}
		e.clk.Advance(17 * time.Second)
	}
	if alertedAt.IsZero() {
		t.Fatal("no alert within two intervals of the change")
	}
	if d := alertedAt.Sub(changed); d > 2*time.Minute {
		t.Errorf("alerted %v after the change, want within two intervals", d)
	}
	if n := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets/filter", nil); n != 0 {
		t.Errorf("%d filter searches after the first full sync, want none", n)
	}
}

// TestFeedManyChangesInOneSecond: more than a page of tickets changed
// within one second (a bulk update); the feed pages by number within the
// second and mirrors every one of them.
func TestFeedManyChangesInOneSecond(t *testing.T) {
	e := newEnv(t, vipRules, WithMaxFiringsPerCycle(0))
	ids := e.addTickets(250, 1)
	e.runOnce()
	e.clk.Advance(time.Minute)
	for _, id := range ids {
		e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Priority = 4 })
	}
	e.sim.Desk.ResetRequests()
	res := e.runOnce()
	if !allComplete(res) || res[0].Fired != 250 || res[0].Sync.Changed != 250 {
		t.Fatalf("cycle %+v sync %+v, want all 250 changes mirrored and fired", res[0], res[0].Sync)
	}
	feed := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets", map[string]string{"filter": "", "order_by": "updated_at", "order_type": "asc"})
	if feed > 4 {
		t.Errorf("%d feed requests for 250 changes in one second, want at most 4", feed)
	}
}

// TestDeletedAndSpamTicketsLeaveTheMirror: soft-deleted and spam tickets
// vanish from the change feed; the sweep finds them, they leave the mirror
// and their episodes end without a re-read.
func TestDeletedAndSpamTicketsLeaveTheMirror(t *testing.T) {
	e := newEnv(t, urgentRules, WithFeed(feed.WithTrashEvery(5*time.Minute)))
	del := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "del", Priority: 4})
	spam := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "spam", Priority: 4})
	keep := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "keep", Priority: 4})
	if res := e.runOnce(); res[0].Fired != 3 {
		t.Fatalf("first cycle fired %d, want 3", res[0].Fired)
	}
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(del.ID, func(x *sdsim.Ticket) { x.Deleted = true })
	e.sim.Desk.UpdateTicket(spam.ID, func(x *sdsim.Ticket) { x.Spam = true })
	ended := 0
	for range 6 {
		e.clk.Advance(time.Minute)
		e.sim.Desk.ResetRequests()
		res := e.runOnce()
		ended += res[0].Ended
		if n := e.sim.Desk.RequestsTo("GET", fmt.Sprintf("/api/v2/tickets/%d", del.ID), nil); n != 0 {
			t.Errorf("the deleted ticket was re-read %d times", n)
		}
	}
	if ended != 2 {
		t.Errorf("%d episodes ended, want the deleted and the spam ticket's", ended)
	}
	r := e.s.Ready()
	if r.Mirror[0].Tickets != 1 {
		t.Errorf("mirror holds %d tickets, want only %d", r.Mirror[0].Tickets, keep.ID)
	}
	// Restored: back in the feed, a new episode.
	e.sim.Desk.UpdateTicket(del.ID, func(x *sdsim.Ticket) { x.Deleted = false })
	e.clk.Advance(time.Minute)
	if res := e.runOnce(); res[0].Fired != 1 {
		t.Errorf("restored ticket: fired %d, want 1", res[0].Fired)
	}
}

// TestResolvedTicketEndsItsEpisodeFromTheFeed: the feed brings the status
// change; the mirror keeps the resolved ticket (rules may look at resolved
// tickets) and the open-ticket rule's episode ends.
func TestResolvedTicketEndsItsEpisodeFromTheFeed(t *testing.T) {
	e := newEnv(t, urgentRules)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4})
	e.runOnce()
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(tk.ID, func(x *sdsim.Ticket) { x.Status = 4 })
	if res := e.runOnce(); res[0].Ended != 1 || res[0].Kept != 0 {
		t.Fatalf("%+v, want the episode ended without a re-read", res[0])
	}
	if r := e.s.Ready(); r.Mirror[0].Tickets != 1 {
		t.Errorf("mirror %+v, want the resolved ticket kept", r.Mirror)
	}
}

// TestANewLeaderContinuesFromTheStoredMirror: a second scheduler on the
// same store (a restart, or another replica taking over) starts from the
// stored mirror and cursor: no full sync, only the changes since. When the
// first one leads again, it reloads what the other changed.
func TestANewLeaderContinuesFromTheStoredMirror(t *testing.T) {
	e := newEnv(t, urgentRules)
	for i := range 100 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 1})
	}
	for range 2 { // the full sync, and a cycle whose cursor passes the tickets' creation
		e.runOnce()
		e.clk.Advance(time.Minute)
	}
	st2 := openStore(t, e.stPath)
	s2 := e.another(firing.ClientDesk(e.client), urgentRules, st2, e.notif, WithRegistry(prometheus.NewRegistry()))
	urgent := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "urgent", Priority: 4})
	e.sim.Desk.ResetRequests()
	c, err := s2.RunCycle(t.Context())
	if err != nil || !c.Sync.Complete || c.Sync.Tickets != 101 || c.Jobs[0].Fired != 1 {
		t.Fatalf("new leader: %+v %+v %v", c.Sync, c.Jobs, err)
	}
	if n := e.sim.Desk.RequestsTo("GET", "/api/v2/tickets/filter", nil); n != 0 {
		t.Errorf("the new leader ran a full sync (%d filter searches)", n)
	}
	if c.Sync.Decoded > 2 {
		t.Errorf("the new leader's feed decoded %d tickets, want only the new one", c.Sync.Decoded)
	}
	// The first scheduler leads again: it must see the urgent ticket as
	// mirrored and fired, not fire again.
	e.clk.Advance(time.Minute)
	e.assign(urgent.ID, sdsim.DefaultAgentID)
	res := e.runOnce()
	if res[0].Fired != 0 || res[0].Ended != 1 {
		t.Errorf("old leader again: %+v, want the urgent ticket's episode ended, nothing fired", res[0])
	}
	if n := len(e.notif.forTicket(urgent.ID)); n != 1 {
		t.Errorf("%d alerts, want 1", n)
	}
}

// gateDesk holds the full sync's first filter page until first closes
// (so that the cycle that starts the sync sees nothing mirrored yet: it
// would race the sync), and its second page until released.
type gateDesk struct {
	firing.Desk
	once    sync.Once
	first   chan struct{}
	reached chan struct{}
	release chan struct{}
}

func (d *gateDesk) FilterTickets(ctx context.Context, query string, opts *sdclient.FilterOptions) (*sdclient.FilterPage, *sdclient.Response, error) {
	if opts != nil && opts.Page <= 1 {
		select {
		case <-d.first:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if opts != nil && opts.Page == 2 {
		d.once.Do(func() { close(d.reached) })
		select {
		case <-d.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return d.Desk.FilterTickets(ctx, query, opts)
}

// TestRulesActDuringTheFirstFullSyncButEndNoEpisode: while the first full
// sync runs in the background, cycles act on the tickets already mirrored,
// /readyz's source shows the progress, and no episode ends until the sync
// is complete.
func TestRulesActDuringTheFirstFullSyncButEndNoEpisode(t *testing.T) {
	e := newEnv(t, urgentRules)
	for i := range 45 { // two filter pages of 30, created an hour ago
		at := t0.Add(-time.Hour + time.Duration(i)*time.Second)
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 4, CreatedAt: at, UpdatedAt: at})
	}
	d := &gateDesk{Desk: firing.ClientDesk(e.client), first: make(chan struct{}), reached: make(chan struct{}), release: make(chan struct{})}
	s := e.another(d, urgentRules, e.st, e.notif, WithRegistry(prometheus.NewRegistry()))
	if _, err := s.currentJobs(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.baseCtx = t.Context()
	first := s.runCycle(t.Context(), scheduled)
	if first.Sync == nil || first.Sync.Complete || first.Jobs[0].Ended != 0 || first.Jobs[0].Fired != 0 {
		t.Fatalf("first cycle %+v, want it to start the full sync, stay incomplete and find nothing mirrored yet", first)
	}
	close(d.first) // now the sync may read its first page
	<-d.reached
	r := s.Ready()
	if len(r.Mirror) != 1 || !r.Mirror[0].Syncing || r.Mirror[0].Seen != 30 || r.Mirror[0].Total != 45 {
		t.Errorf("mirror status %+v, want syncing 30 of 45", r.Mirror)
	}
	if err := s.MirrorHealth(t.Context()); err == nil || err.Error() != "the first full sync of the default workspace is under way: syncing 30 of 45" {
		t.Errorf("MirrorHealth during the sync: %v", err)
	}
	// A page-1 ticket is assigned meanwhile: the feed sees it, but the
	// episode must not end on an incomplete mirror.
	e.assign(45, sdsim.DefaultAgentID)
	e.clk.Advance(time.Minute)
	c := s.runCycle(t.Context(), scheduled)
	if c.Sync.Complete || c.Jobs[0].Fired != 29 || c.Jobs[0].Ended != 0 {
		t.Fatalf("cycle during the sync: %+v %+v, want 29 fired on the mirrored page, nothing ended", c.Sync, c.Jobs)
	}
	close(d.release)
	eventually(t, "the full sync and the cycle it kicks", 10*time.Second, func() bool { return len(e.notif.list()) == 44 })
	s.inflight.Wait()
	if r := s.Ready(); !r.Mirror[0].Complete || r.Mirror[0].Syncing || r.Mirror[0].Tickets != 45 {
		t.Errorf("after the sync: %+v", r.Mirror)
	}
	if err := s.MirrorHealth(t.Context()); err != nil {
		t.Errorf("MirrorHealth after the sync: %v", err)
	}
	e.clk.Advance(11 * time.Minute) // no cycle meanwhile
	if err := s.MirrorHealth(t.Context()); err == nil || err.Error() != "the change feed of the default workspace is 11m30s behind" {
		t.Errorf("MirrorHealth with a stale feed: %v", err)
	}
	var got []int64
	for _, a := range e.notif.list() {
		got = append(got, a.Ticket.ID)
	}
	slices.Sort(got)
	if slices.Contains(got, 45) || len(slices.Compact(got)) != 44 {
		t.Errorf("alerts for tickets %v, want each open unassigned one once", got)
	}
}

// TestFeedSubscribersHearEachCyclesChanges: a subscriber given to the
// scheduler hears, after each cycle's sync, the tickets the change feed
// brought, before the rules act on them.
func TestFeedSubscribersHearEachCyclesChanges(t *testing.T) {
	rec := &recSubscriber{}
	e := newEnv(t, urgentRules, WithSubscriber(rec))
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 1})
	e.runOnce()
	e.clk.Advance(time.Minute)
	e.sim.Desk.UpdateTicket(tk.ID, func(x *sdsim.Ticket) { x.Priority = 4 })
	if res := e.runOnce(); res[0].Fired != 1 {
		t.Fatalf("%+v, want the urgent ticket fired", res[0])
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.told) != 2 {
		t.Fatalf("the subscriber heard of %d syncs, want 2", len(rec.told))
	}
	if c := rec.told[1]; !c.Complete || len(c.Tickets) != 1 || c.Tickets[0].ID != tk.ID || c.Tickets[0].Priority != 4 {
		t.Errorf("second sync: %+v, want ticket %d at priority 4, complete", c, tk.ID)
	}
}

// countingReader counts the reads people's commands make of the store.
type countingReader struct {
	feed.MirrorReader
	reads atomic.Int64
}

func (r *countingReader) MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error) {
	r.reads.Add(1)
	return r.MirrorReader.MirrorStates(ctx)
}

// switchElector is an elector that says at once whether this replica
// leads (Leader), as the store's leadership does.
type switchElector struct{ leads atomic.Bool }

func (l *switchElector) IsLeader(context.Context) error {
	if !l.leads.Load() {
		return ErrNotLeader
	}
	return nil
}

func (l *switchElector) Leader() bool { return l.leads.Load() }

// TestLiveMirrorFollowsTheElector: people read the scheduler's mirror
// from memory while its elector says it leads, the store otherwise.
func TestLiveMirrorFollowsTheElector(t *testing.T) {
	lead := &switchElector{}
	lead.leads.Store(true)
	e := newEnv(t, urgentRules, WithElector(lead))
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 1})
	e.runOnce()
	st := &countingReader{MirrorReader: e.st}
	live := feed.NewLiveMirror(st)
	live.Attach(e.s.Feed())
	for _, leads := range []bool{true, false, true} {
		lead.leads.Store(leads)
		st.reads.Store(0)
		if _, err := live.MirrorStates(t.Context()); err != nil {
			t.Fatal(err)
		}
		if fromStore := st.reads.Load() > 0; fromStore == leads {
			t.Errorf("leading %v: read the store %v", leads, fromStore)
		}
	}
}
