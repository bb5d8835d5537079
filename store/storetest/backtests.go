package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/deskbot/deskbot/store"
)

// backtestTests: the last backtest's report (migration 0012, issue 25).
var backtestTests = []struct {
	name string
	fn   func(t *testing.T, open Open)
}{
	{"LastBacktestLatestWins", testLastBacktest},
}

// The store keeps one backtest report: none at first, then the one that
// ran last, whatever order they are kept in; another store on the same
// database reads it, and a report without a file, a time or a body is
// refused.
func testLastBacktest(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if _, ok, err := s.LastBacktest(ctx); err != nil || ok {
		t.Fatalf("LastBacktest before any: ok %v, err %v; want none", ok, err)
	}
	report := func(file string, ranAt time.Time, firings int, trimmed bool) store.Backtest {
		body := []byte(`{"file":"` + file + `","firings":[]}`)
		return store.Backtest{File: file, RanAt: ranAt, From: ranAt.Add(-7 * 24 * time.Hour), To: ranAt,
			Firings: firings, Trimmed: trimmed, Report: body}
	}
	want := func(s *store.Store, b store.Backtest) {
		t.Helper()
		got, ok, err := s.LastBacktest(ctx)
		switch {
		case err != nil || !ok:
			t.Fatalf("LastBacktest: ok %v, err %v", ok, err)
		case got.File != b.File || !got.RanAt.Equal(b.RanAt) || !got.From.Equal(b.From) || !got.To.Equal(b.To) ||
			got.Firings != b.Firings || got.Trimmed != b.Trimmed || !bytes.Equal(got.Report, b.Report):
			t.Errorf("LastBacktest = %+v (report %s), want %+v (report %s)", got, got.Report, b, b.Report)
		case got.RanAt.Location() != time.UTC || got.From.Location() != time.UTC:
			t.Errorf("times not in UTC: %v, %v", got.RanAt, got.From)
		}
	}
	first := report("rules.yaml", t0.Add(time.Hour), 316, false)
	if err := s.KeepBacktest(ctx, first); err != nil {
		t.Fatal(err)
	}
	want(s, first)
	newer := report("rules.new.yaml", t0.Add(2*time.Hour), 12000, true)
	if err := s.KeepBacktest(ctx, newer); err != nil {
		t.Fatal(err)
	}
	want(s, newer)
	// A run that began earlier and finished later does not replace it.
	if err := s.KeepBacktest(ctx, report("rules.old.yaml", t0.Add(90*time.Minute), 5, false)); err != nil {
		t.Fatal(err)
	}
	want(open(t), newer) // as another replica's status pages read it
	for _, bad := range []store.Backtest{
		{RanAt: t0, Report: []byte("{}")},
		{File: "rules.yaml", Report: []byte("{}")},
		{File: "rules.yaml", RanAt: t0.Add(3 * time.Hour)},
	} {
		if err := s.KeepBacktest(ctx, bad); err == nil {
			t.Errorf("KeepBacktest(%+v): no error", bad)
		}
	}
	want(s, newer)
}
