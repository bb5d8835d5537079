package store_test

import (
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

// pagesOpen opens two handles on one fresh database, like two replicas.
type pagesOpen func(t *testing.T) (a, b *store.Store)

func pagesSQLite(t *testing.T) (*store.Store, *store.Store) {
	path := filepath.Join(t.TempDir(), "state.db")
	return storetest.OpenStore(t, path), storetest.OpenStore(t, path)
}

func pagesPostgres(t *testing.T) (*store.Store, *store.Store) {
	dsn, schema := pgtest.Schema(t)
	return storetest.OpenStore(t, dsn, store.WithSchema(schema)), storetest.OpenStore(t, dsn, store.WithSchema(schema))
}

func TestPagesSQLite(t *testing.T)   { runPages(t, pagesSQLite) }
func TestPagesPostgres(t *testing.T) { runPages(t, pagesPostgres) }

func runPages(t *testing.T, open pagesOpen) {
	t.Run("create and read back", func(t *testing.T) { testPageRoundTrip(t, open) })
	t.Run("due pages", func(t *testing.T) { testDuePages(t, open) })
	t.Run("swap", func(t *testing.T) { testSwapPage(t, open) })
	t.Run("racing swaps", func(t *testing.T) { testRacingSwaps(t, open) })
}

var pageT0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func newPage(rule string, ticket int64, at time.Time) oncall.Page {
	return oncall.NewPage(oncall.PageSpec{Rule: rule, TicketID: ticket, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall", Text: "Urgent"}, at)
}

func testPageRoundTrip(t *testing.T, open pagesOpen) {
	a, b := open(t)
	ctx := t.Context()
	p := newPage("r", 42, pageT0)
	p.Target = &oncall.Target{Kind: oncall.TargetPerson, ID: "alice@example.com", Schedule: "it-primary"}
	p.History = []oncall.Event{{At: pageT0, Kind: oncall.EventPaged, Position: oncall.Position{Step: 1, Target: p.Target}}}
	if created, err := a.CreatePage(ctx, p); err != nil || !created {
		t.Fatalf("CreatePage = %v, %v", created, err)
	}
	if created, err := b.CreatePage(ctx, newPage("r", 42, pageT0.Add(time.Hour))); err != nil || created {
		t.Fatalf("second CreatePage = %v, %v; want not created", created, err)
	}
	got, ok, err := b.Page(ctx, p.Key)
	if err != nil || !ok {
		t.Fatalf("Page = %v, %v", ok, err)
	}
	if got.Version != 1 || got.Key != "r/42/1" || got.TicketID != 42 || got.Channel != "#it-oncall" || got.Text != "Urgent" ||
		!got.StartedAt.Equal(pageT0) || !got.NextAt.Equal(pageT0) || got.Level != -1 || *got.Target != *p.Target ||
		len(got.History) != 1 || got.History[0].Kind != oncall.EventPaged || !got.History[0].At.Equal(pageT0) {
		t.Errorf("read back %+v", got)
	}
	if _, ok, err := b.Page(ctx, "nope"); ok || err != nil {
		t.Errorf("Page(nope) = %v, %v", ok, err)
	}
	if _, err := a.CreatePage(ctx, oncall.Page{}); err == nil {
		t.Error("a page without a key was stored")
	}
}

func testDuePages(t *testing.T, open pagesOpen) {
	a, b := open(t)
	ctx := t.Context()
	for i, off := range []time.Duration{3 * time.Minute, time.Minute, 2 * time.Minute, time.Hour} {
		if _, err := a.CreatePage(ctx, newPage("r", int64(i+1), pageT0.Add(off))); err != nil {
			t.Fatal(err)
		}
	}
	done := newPage("done", 9, pageT0)
	done.Done = true
	if _, err := a.CreatePage(ctx, done); err != nil {
		t.Fatal(err)
	}
	due, err := b.DuePages(ctx, pageT0.Add(3*time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range due {
		keys = append(keys, p.Key)
	}
	if want := []string{"r/2/1", "r/3/1", "r/1/1"}; !slices.Equal(keys, want) {
		t.Errorf("due = %v; want %v (earliest first, done and future left out)", keys, want)
	}
	if due, _ := b.DuePages(ctx, pageT0.Add(3*time.Minute), 2); len(due) != 2 {
		t.Errorf("limit 2 gave %d", len(due))
	}
	// Pages of a ticket, newest first.
	if _, err := a.CreatePage(ctx, oncall.NewPage(oncall.PageSpec{Rule: "r", TicketID: 1, Episode: 2, Policy: "p"}, pageT0.Add(2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	tp, err := b.TicketPages(ctx, 1)
	if err != nil || len(tp) != 2 || tp[0].Key != "r/1/2" || tp[1].Key != "r/1/1" {
		t.Errorf("TicketPages = %+v, %v", tp, err)
	}
}

func testSwapPage(t *testing.T, open pagesOpen) {
	a, b := open(t)
	ctx := t.Context()
	p := newPage("r", 42, pageT0)
	if _, err := a.CreatePage(ctx, p); err != nil {
		t.Fatal(err)
	}
	p, _, _ = a.Page(ctx, p.Key)
	stale := p.Clone()
	p.NextAt = pageT0.Add(10 * time.Minute)
	if won, err := a.SwapPage(ctx, p); err != nil || !won {
		t.Fatalf("SwapPage = %v, %v", won, err)
	}
	stale.Done = true
	if won, err := b.SwapPage(ctx, stale); err != nil || won {
		t.Fatalf("SwapPage of a stale version = %v, %v; want lost", won, err)
	}
	got, _, _ := b.Page(ctx, p.Key)
	if got.Version != 2 || got.Done || !got.NextAt.Equal(pageT0.Add(10*time.Minute)) {
		t.Errorf("after swaps: %+v", got)
	}
	if due, _ := b.DuePages(ctx, pageT0.Add(9*time.Minute), 0); len(due) != 0 {
		t.Errorf("page due before its next_at: %+v", due)
	}
	// An acknowledgement is visible through Ack as well.
	got.Ack("boss@example.com", pageT0.Add(12*time.Minute))
	if won, err := b.SwapPage(ctx, got); err != nil || !won {
		t.Fatalf("ack swap = %v, %v", won, err)
	}
	by, at, ok, err := a.Ack(ctx, p.Key)
	if err != nil || !ok || by != "boss@example.com" || !at.Equal(pageT0.Add(12*time.Minute)) {
		t.Errorf("Ack = %q, %v, %v, %v", by, at, ok, err)
	}
	missing := newPage("missing", 1, pageT0)
	if _, err := a.SwapPage(ctx, missing); !errors.Is(err, oncall.ErrNoPage) {
		t.Errorf("SwapPage of a missing page = %v; want ErrNoPage", err)
	}
}

// Many goroutines on two handles swap the same version: exactly one wins.
func testRacingSwaps(t *testing.T, open pagesOpen) {
	a, b := open(t)
	ctx := t.Context()
	for round := range 5 {
		p := newPage("race", int64(round), pageT0)
		if _, err := a.CreatePage(ctx, p); err != nil {
			t.Fatal(err)
		}
		p, _, _ = a.Page(ctx, p.Key)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				q := p.Clone()
				q.Step = i + 1
				won, err := s.SwapPage(ctx, q)
				if err != nil {
					t.Error(err)
				}
				if won {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Errorf("round %d: %d swaps of one version won; want exactly 1", round, n)
		}
	}
}
