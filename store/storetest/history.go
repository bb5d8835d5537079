package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// testHistory checks the ticket history: append and scan in order within
// bounds (fields round-trip, a repeated (At, ticket) replaced, bad input
// refused whole), Scan's batches, which tickets are live, and the prune
// that keeps each ticket's state at the horizon.
func testHistory(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if start, err := s.Start(ctx); err != nil || !start.IsZero() {
		t.Fatalf("new store: Start = %v, %v; want zero", start, err)
	}
	tk := func(id int64, status int, tags ...string) *sdclient.Ticket {
		return &sdclient.Ticket{ID: id, Status: status, Priority: 2, Subject: fmt.Sprintf("ticket %d", id), Tags: tags,
			CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0}
	}
	rec := func(at time.Duration, t *sdclient.Ticket, gone bool) history.Record {
		return history.Record{At: t0.Add(at), Ticket: t, Gone: gone}
	}
	appendRecs := func(recs ...history.Record) {
		t.Helper()
		if err := s.AppendHistory(ctx, recs); err != nil {
			t.Fatalf("AppendHistory: %v", err)
		}
	}
	type seen struct {
		at     time.Duration
		id     int64
		status int
		gone   bool
		tags   string
	}
	scan := func(s *store.Store, from, to time.Duration) []seen {
		t.Helper()
		var out []seen
		err := s.Scan(ctx, t0.Add(from), t0.Add(to), func(r history.Record) error {
			out = append(out, seen{r.At.Sub(t0), r.Ticket.ID, r.Ticket.Status, r.Gone, fmt.Sprint(r.Ticket.Tags)})
			return nil
		})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		return out
	}
	appendRecs(
		rec(time.Hour, tk(3, 2, "vpn"), false),
		rec(0, tk(1, 2), false),
		rec(0, tk(2, 2), false),
		rec(time.Hour, tk(1, 3, "first"), false),
		rec(time.Hour, tk(1, 3, "second"), false), // same second: the later wins
		rec(2*time.Hour, tk(2, 2), true),
	)
	if err := s.AppendHistory(ctx, []history.Record{rec(5*time.Hour, tk(9, 2), false), {At: t0}}); err == nil {
		t.Error("AppendHistory with a record without a ticket: no error")
	}
	want := []seen{{0, 1, 2, false, "[]"}, {0, 2, 2, false, "[]"}, {time.Hour, 1, 3, false, "[second]"},
		{time.Hour, 3, 2, false, "[vpn]"}, {2 * time.Hour, 2, 2, true, "[]"}}
	if got := scan(open(t), 0, 10*time.Hour); !slices.Equal(got, want) {
		t.Errorf("Scan from another replica:\n got %v\nwant %v", got, want)
	}
	if got := scan(s, time.Hour, 2*time.Hour); !slices.Equal(got, want[2:4]) {
		t.Errorf("Scan [1h, 2h):\n got %v\nwant %v", got, want[2:4])
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.Scan(ctx, t0, t0.Add(time.Hour), func(history.Record) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Scan with fn failing: %v after %d calls; want stop after 1", err, calls)
	}
	if start, err := s.Start(ctx); err != nil || !start.Equal(t0) {
		t.Errorf("Start = %v, %v; want %v", start, err, t0)
	}
	live, err := s.HistoryLive(ctx, []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !live[1] || live[2] || !live[3] || live[4] || len(live) != 2 {
		t.Errorf("HistoryLive(1..4) = %v; want 1 and 3 (2 is gone, 4 unknown)", live)
	}

	// Prune at 2h30m, a row at a time: ticket 1 keeps its 1h state (moved
	// to the horizon) and its later change; 2 is gone, 4 closed before
	// the horizon; 3 and 5 keep theirs.
	appendRecs(rec(3*time.Hour, tk(1, 4), false), rec(30*time.Minute, tk(4, 2), false),
		rec(2*time.Hour, tk(4, 5), false), rec(90*time.Minute, tk(5, 2), false))
	horizon := 150 * time.Minute
	for i := 0; ; i++ {
		n, err := s.PruneHistory(ctx, t0.Add(horizon), 1)
		if err != nil {
			t.Fatalf("PruneHistory: %v", err)
		}
		if n == 0 {
			break
		}
		if i > 50 {
			t.Fatal("PruneHistory never reports 0")
		}
	}
	want = []seen{{horizon, 1, 3, false, "[second]"}, {horizon, 3, 2, false, "[vpn]"}, {horizon, 5, 2, false, "[]"},
		{3 * time.Hour, 1, 4, false, "[]"}}
	if got := scan(s, -time.Hour, 10*time.Hour); !slices.Equal(got, want) {
		t.Errorf("after the prune:\n got %v\nwant %v", got, want)
	}
	if start, _ := s.Start(ctx); !start.Equal(t0.Add(horizon)) {
		t.Errorf("Start after the prune = %v, want the horizon %v", start, t0.Add(horizon))
	}

	// Scan reads in batches: more records than one holds, in order.
	const many = 5003
	recs := make([]history.Record, many)
	for i := range recs {
		recs[i] = rec(10*time.Hour+time.Duration(i/2)*time.Second, tk(int64(100+i%7), 2), false)
	}
	appendRecs(recs...)
	var prev history.Record
	n := 0
	err = s.Scan(ctx, t0.Add(10*time.Hour), t0.Add(20*time.Hour), func(r history.Record) error {
		if n > 0 && (r.At.Before(prev.At) || (r.At.Equal(prev.At) && r.Ticket.ID <= prev.Ticket.ID)) {
			return fmt.Errorf("record %d (%v, %d) after (%v, %d)", n, r.At, r.Ticket.ID, prev.At, prev.Ticket.ID)
		}
		prev = r
		n++
		return nil
	})
	if err != nil || n != many {
		t.Errorf("Scan of %d records: %d read, %v", many, n, err)
	}

	// ClearHistory (DESKBOT_HISTORY=0) removes it all, limit rows a call.
	cleared := 0
	for {
		n, err := s.ClearHistory(ctx, 2000)
		if err != nil {
			t.Fatalf("ClearHistory: %v", err)
		}
		if n > 2000 {
			t.Fatalf("ClearHistory(limit 2000) removed %d rows", n)
		}
		if n == 0 {
			break
		}
		cleared += n
	}
	if cleared != many+4 || len(scan(s, -time.Hour, 100*time.Hour)) != 0 {
		t.Errorf("ClearHistory removed %d rows, want %d, and nothing left", cleared, many+4)
	}
}
