package recorder_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/history/recorder"
	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clientDesk is the real sdclient client as the feed's Desk (the
// execution step's adapter, which reads what the feed reads).
func clientDesk(c *sdclient.Client) feed.Desk { return firing.ClientDesk(c) }

// env is the real feed over the desk simulator, through the real client,
// with a recorder on a real store.
type env struct {
	t      testing.TB
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	st     *store.Store
	rec    *recorder.Recorder
	f      *feed.Feed
}

// engines are the stores to run on: SQLite, and PostgreSQL when
// DESKBOT_TEST_POSTGRES is set (see .ci/run).
func engines(t *testing.T, fn func(t *testing.T, open func(t testing.TB) *store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, func(t testing.TB) *store.Store {
			return testkit.Store(t, filepath.Join(t.TempDir(), "state.db"))
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.DSN(t)
		fn(t, func(t testing.TB) *store.Store { return testkit.Store(t, pgtest.SchemaDSN(t)) })
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv is a feed of a new simulator on st, with a recorder of recOpts
// on the fake clock (nil recOpts: none).
func newEnv(t testing.TB, st *store.Store, recOpts []recorder.Option, simOpts ...sdsim.Option) *env {
	t.Helper()
	e := &env{t: t, st: st}
	e.clk, e.sim = testkit.FakeDesk(t, t0, simOpts...)
	if recOpts != nil {
		e.rec = recorder.New(st, append([]recorder.Option{recorder.WithLogger(quiet()), recorder.WithClock(e.clk.Now)}, recOpts...)...)
	}
	e.client = testkit.DeskClient(t, e.sim)
	opts := []feed.Option{feed.WithLogger(quiet()), feed.WithClock(e.clk), feed.WithMirrorStore(st),
		feed.WithTrashEvery(time.Minute)}
	if e.rec != nil {
		opts = append(opts, feed.WithSubscriber(e.rec))
	}
	var err error
	if e.f, err = feed.New(clientDesk(e.client), opts...); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) sync() *feed.Synced {
	e.t.Helper()
	res := e.f.Sync(context.Background(), feed.Inline())
	if !res.Complete {
		e.t.Fatalf("sync incomplete: %v", res.Err)
	}
	return res
}

// line is a record as the tests compare it.
type line struct {
	at       time.Duration // since t0
	id       int64
	priority int
	status   int
	gone     bool
}

func (l line) String() string {
	return fmt.Sprintf("{+%v #%d p%d s%d gone=%v}", l.at, l.id, l.priority, l.status, l.gone)
}

func scanAll(t testing.TB, r history.Reader) []line {
	t.Helper()
	var out []line
	err := r.Scan(context.Background(), time.Time{}, t0.Add(1000*time.Hour), func(r history.Record) error {
		if r.Ticket.Description != "" || r.Ticket.DescriptionText != "" {
			return fmt.Errorf("ticket %d recorded with its description", r.Ticket.ID)
		}
		out = append(out, line{r.At.Sub(t0), r.Ticket.ID, r.Ticket.Priority, r.Ticket.Status, r.Gone})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecordsWhatTheFeedSaw: the first full sync records the starting
// state, each sync's changes follow (at the desk's updated_at), a deleted
// ticket is recorded as gone, what deskbot changed itself (Observe) is
// recorded too, and a later full sync records nothing twice.
func TestRecordsWhatTheFeedSaw(t *testing.T) {
	engines(t, func(t *testing.T, open func(testing.TB) *store.Store) {
		st := open(t)
		e := newEnv(t, st, []recorder.Option{})
		d := e.sim.Desk
		a := d.AddTicket(sdsim.Ticket{Subject: "a", Priority: 1, Description: "<p>secret</p>"}).ID
		b := d.AddTicket(sdsim.Ticket{Subject: "b", Priority: 2}).ID
		c := d.AddTicket(sdsim.Ticket{Subject: "c", Priority: 3}).ID
		e.clk.Advance(time.Minute)
		e.sync()
		start := time.Minute
		want := []line{{start, a, 1, 2, false}, {start, b, 2, 2, false}, {start, c, 3, 2, false}}
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("after the first full sync:\n got %v\nwant %v", got, want)
		}
		if s, err := st.Start(t.Context()); err != nil || !s.Equal(t0.Add(start)) {
			t.Errorf("Start = %v, %v; want the first full sync's time %v", s, err, t0.Add(start))
		}

		e.clk.Advance(time.Minute)
		d.UpdateTicket(a, func(x *sdsim.Ticket) { x.Priority = 4 })
		e.clk.Advance(time.Minute)
		d.UpdateTicket(b, func(x *sdsim.Ticket) { x.Deleted = true })
		e.clk.Advance(time.Minute)
		e.sync()
		want = append(want, line{2 * time.Minute, a, 4, 2, false}, line{3 * time.Minute, b, 2, 2, true})
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("after a change and a deletion:\n got %v\nwant %v", got, want)
		}

		// deskbot resolves c itself and takes the desk's answer in (as a
		// firing does): the change feed will not call it a change.
		e.clk.Advance(time.Minute)
		resolved, _, err := e.client.Tickets.Update(t.Context(), c, &sdclient.TicketUpdate{Status: sdclient.Ptr(sdclient.StatusResolved)})
		if err != nil {
			t.Fatal(err)
		}
		e.f.Observe(resolved)
		e.clk.Advance(time.Minute)
		if res := e.sync(); res.Changed != 0 {
			t.Errorf("the feed called %d tickets changed; deskbot's own change was already in the mirror", res.Changed)
		}
		want = append(want, line{5 * time.Minute, c, 3, sdclient.StatusResolved, false})
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("after deskbot's own change:\n got %v\nwant %v", got, want)
		}

		// A later full sync (a new process's) records nothing already held.
		f2, err := feed.New(clientDesk(e.client), feed.WithLogger(quiet()), feed.WithClock(e.clk),
			feed.WithMirrorStore(open(t)), feed.WithSubscriber(e.rec))
		if err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Minute)
		if res := f2.Sync(t.Context(), feed.Inline()); !res.Complete {
			t.Fatal(res.Err)
		}
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("after a second full sync:\n got %v\nwant %v", got, want)
		}
	})
}

// TestRetentionPrunes: with a retention of an hour, a sync two hours on
// prunes as it goes: the history then starts at the horizon with each open
// ticket's state as of then; the deleted ticket and the one resolved
// before the horizon are gone, later changes stay.
func TestRetentionPrunes(t *testing.T) {
	engines(t, func(t *testing.T, open func(testing.TB) *store.Store) {
		st := open(t)
		e := newEnv(t, st, []recorder.Option{recorder.WithRetention(time.Hour), recorder.WithPrune(time.Minute, 2, 3)})
		d := e.sim.Desk
		a := d.AddTicket(sdsim.Ticket{Subject: "a", Priority: 1}).ID
		b := d.AddTicket(sdsim.Ticket{Subject: "b", Priority: 2}).ID
		c := d.AddTicket(sdsim.Ticket{Subject: "c", Priority: 3}).ID
		z := d.AddTicket(sdsim.Ticket{Subject: "z", Priority: 1}).ID
		e.sync() // the starting state at t0
		e.clk.Advance(10 * time.Minute)
		d.UpdateTicket(a, func(x *sdsim.Ticket) { x.Priority = 4 })
		d.UpdateTicket(b, func(x *sdsim.Ticket) { x.Deleted = true })
		d.UpdateTicket(c, func(x *sdsim.Ticket) { x.Status = sdclient.StatusResolved })
		e.clk.Advance(time.Minute)
		e.sync()
		if got := scanAll(t, st); len(got) != 7 {
			t.Fatalf("before the prune: %d records %v, want 7", len(got), got)
		}
		e.clk.Advance(2 * time.Hour) // now t0+2h11m: the horizon is t0+1h11m
		d.UpdateTicket(z, func(x *sdsim.Ticket) { x.Priority = 2 })
		e.clk.Advance(time.Minute)
		for range 5 { // 2 rows a statement, 3 statements a sync: the prune takes several syncs
			e.sync()
		}
		horizon := 72 * time.Minute
		want := []line{{horizon, a, 4, 2, false}, {horizon, z, 1, 2, false}, {131 * time.Minute, z, 2, 2, false}}
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("after the prune:\n got %v\nwant %v", got, want)
		}
		if s, _ := st.Start(t.Context()); !s.Equal(t0.Add(horizon)) {
			t.Errorf("Start = %v, want the horizon %v", s, t0.Add(horizon))
		}
	})
}

// TestRetentionZeroRecordsNothing: DESKBOT_HISTORY=0 records nothing and
// removes what an earlier run recorded.
func TestRetentionZeroRecordsNothing(t *testing.T) {
	engines(t, func(t *testing.T, open func(testing.TB) *store.Store) {
		st := open(t)
		old := history.Record{At: t0.Add(-time.Hour), Ticket: &sdclient.Ticket{ID: 99, Status: 2}}
		if err := st.AppendHistory(t.Context(), []history.Record{old}); err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, st, []recorder.Option{recorder.WithRetention(0)})
		d := e.sim.Desk
		a := d.AddTicket(sdsim.Ticket{Subject: "a", Priority: 1}).ID
		e.sync()
		e.clk.Advance(time.Minute)
		d.UpdateTicket(a, func(x *sdsim.Ticket) { x.Priority = 4 })
		e.clk.Advance(time.Minute)
		if res := e.sync(); res.Changed != 1 {
			t.Fatalf("the feed saw %d changes, want 1", res.Changed)
		}
		if got := scanAll(t, st); len(got) != 0 {
			t.Errorf("with retention 0 the history holds %v, want nothing", got)
		}
	})
}

// openTicket is ticket id, open, of priority prio, updated at t0+at.
func openTicket(id int64, prio int, at time.Duration) *sdclient.Ticket {
	return &sdclient.Ticket{ID: id, Priority: prio, Status: 2, CreatedAt: t0, UpdatedAt: t0.Add(at)}
}

// TestHistoryBeginsWithTheStartingState: a sync's changes heard before any
// full sync recorded the starting state are not kept (the starting state
// holds them; a history that began with them would be replayed as a desk
// of those few tickets), those after it are, and a recorder started again
// on a history that has its starting state records changes at once.
func TestHistoryBeginsWithTheStartingState(t *testing.T) {
	engines(t, func(t *testing.T, open func(t testing.TB) *store.Store) {
		st := open(t)
		ctx := t.Context()
		rec := recorder.New(st, recorder.WithLogger(quiet()), recorder.WithClock(func() time.Time { return t0.Add(time.Hour) }))
		rec.FeedChanged(ctx, feed.Changes{Tickets: []*sdclient.Ticket{openTicket(1, 1, 0)}})
		if got := scanAll(t, st); len(got) != 0 {
			t.Fatalf("before the starting state: recorded %v, want nothing", got)
		}
		rec.FeedFullSynced(ctx, t0.Add(2*time.Second), []*sdclient.Ticket{openTicket(1, 1, 0), openTicket(2, 2, 0)})
		rec.FeedChanged(ctx, feed.Changes{Tickets: []*sdclient.Ticket{openTicket(2, 4, 5*time.Second)}})
		again := recorder.New(st, recorder.WithLogger(quiet()), recorder.WithClock(func() time.Time { return t0.Add(time.Hour) }))
		again.FeedChanged(ctx, feed.Changes{Tickets: []*sdclient.Ticket{openTicket(1, 3, 9*time.Second)}})
		want := []line{{2 * time.Second, 1, 1, 2, false}, {2 * time.Second, 2, 2, 2, false}, {5 * time.Second, 2, 4, 2, false}, {9 * time.Second, 1, 3, 2, false}}
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("history:\n got %v\nwant %v", got, want)
		}
	})
}

// TestChangeStampedBeforeTheStartingState: the desk stamps in whole
// seconds and the feed lags, so a change the mirror did not hold when the
// starting state was taken (at 2.75s) can carry an updated_at before it
// (2s). It is recorded just after the starting state, not before: the
// replay must not put the older state back over it. Later changes keep
// their own times.
func TestChangeStampedBeforeTheStartingState(t *testing.T) {
	engines(t, func(t *testing.T, open func(t testing.TB) *store.Store) {
		st := open(t)
		ctx := t.Context()
		rec := recorder.New(st, recorder.WithLogger(quiet()), recorder.WithClock(func() time.Time { return t0.Add(3 * time.Second) }))
		taken := t0.Add(2750 * time.Millisecond)
		rec.FeedFullSynced(ctx, taken, []*sdclient.Ticket{openTicket(1, 1, 0), openTicket(2, 2, 0)})
		rec.FeedChanged(ctx, feed.Changes{Tickets: []*sdclient.Ticket{openTicket(2, 4, 2*time.Second)}})
		rec.FeedChanged(ctx, feed.Changes{Tickets: []*sdclient.Ticket{openTicket(2, 3, 9*time.Second), openTicket(1, 4, time.Second)}})
		want := []line{
			{2750 * time.Millisecond, 1, 1, 2, false}, {2750 * time.Millisecond, 2, 2, 2, false},
			{2750*time.Millisecond + time.Microsecond, 1, 4, 2, false}, {2750*time.Millisecond + time.Microsecond, 2, 4, 2, false},
			{9 * time.Second, 2, 3, 2, false},
		}
		if got := scanAll(t, st); !slices.Equal(got, want) {
			t.Fatalf("history:\n got %v\nwant %v", got, want)
		}
	})
}
