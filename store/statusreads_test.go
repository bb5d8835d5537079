package store_test

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

func TestSQLiteStatusReads(t *testing.T) { testStatusReads(t, sqliteOpen) }

func TestPostgresStatusReads(t *testing.T) {
	pgtest.DSN(t)
	testStatusReads(t, pgOpen)
}

// testStatusReads checks the status pages' reads: recent firings newest
// (last claimed) first with their filters and action counts, the firings per rule and
// hour of a day, and the open on-call pages.
func testStatusReads(t *testing.T, open storetest.Open) {
	ctx := t.Context()
	s := open(t)
	day := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	once := rules.Once{Mode: rules.OnceEpisode}
	fire := func(rule string, ticket int64, at time.Time, finish bool, actions int) int64 {
		t.Helper()
		f, err := s.Claim(ctx, rules.FiringKey{Rule: rule, TicketID: ticket}, once, at, time.Minute)
		if err != nil || !f.Won {
			t.Fatalf("claim %s #%d: %+v %v", rule, ticket, f, err)
		}
		for i := range actions {
			if err := s.ActionDone(ctx, f.ID, i); err != nil {
				t.Fatal(err)
			}
		}
		if finish {
			if err := s.Finish(ctx, f.ID, at.Add(3*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		return f.ID
	}
	fire("a", 4, day.Add(-2*time.Hour), true, 1) // before the day
	fire("a", 1, day.Add(1*time.Hour+10*time.Minute), true, 2)
	fire("a", 2, day.Add(1*time.Hour+50*time.Minute), true, 2)
	fire("b", 1, day.Add(5*time.Hour), true, 1)
	pending := fire("b", 3, day.Add(6*time.Hour), false, 0)

	all, err := s.RecentFirings(ctx, store.FiringFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[0].ID != pending || all[0].Done || all[0].Actions != 0 {
		t.Fatalf("RecentFirings: %+v, want 5 newest first, the pending one first", all)
	}
	if f := all[len(all)-2]; f.Rule != "a" || f.TicketID != 1 || !f.Done || f.Actions != 2 || f.FiredAt.Sub(f.StartedAt) != 3*time.Second {
		t.Errorf("oldest firing: %+v", f)
	}
	for _, tc := range []struct {
		f    store.FiringFilter
		want int
	}{
		{store.FiringFilter{Rule: "a"}, 3},
		{store.FiringFilter{TicketID: 1}, 2},
		{store.FiringFilter{State: "pending"}, 1},
		{store.FiringFilter{State: "done", Rule: "b"}, 1},
		{store.FiringFilter{Limit: 2}, 2},
		{store.FiringFilter{Rule: "none"}, 0},
	} {
		got, err := s.RecentFirings(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("RecentFirings(%+v): %d, want %d", tc.f, len(got), tc.want)
		}
	}

	counts, err := s.FiredPerHour(ctx, day, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[int]int{}
	for _, c := range counts {
		if got[c.Rule] == nil {
			got[c.Rule] = map[int]int{}
		}
		got[c.Rule][c.Hour] += c.N
	}
	if len(got) != 2 || got["a"][1] != 2 || len(got["a"]) != 1 || got["b"][5] != 1 || len(got["b"]) != 1 {
		t.Errorf("FiredPerHour(day): %v, want a: 2 in hour 1; b: 1 in hour 5 (pending and earlier firings left out)", got)
	}
	onlyB, err := s.FiredPerHour(ctx, day, "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(onlyB) != 1 || onlyB[0].Rule != "b" {
		t.Errorf("FiredPerHour(day, b): %+v", onlyB)
	}

	for i, id := range []int64{7, 8} {
		p := oncall.NewPage(oncall.PageSpec{Rule: "a", TicketID: id, Episode: 1, Policy: "p"}, day.Add(time.Duration(2-i)*time.Hour))
		if _, err := s.CreatePage(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	done := oncall.NewPage(oncall.PageSpec{Rule: "a", TicketID: 9, Episode: 1, Policy: "p"}, day)
	done.Done = true
	if _, err := s.CreatePage(ctx, done); err != nil {
		t.Fatal(err)
	}
	pages, err := s.OpenPages(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].TicketID != 8 || pages[1].TicketID != 7 {
		t.Errorf("OpenPages: %+v, want #8 then #7 (oldest first, the done one left out)", pages)
	}
}
