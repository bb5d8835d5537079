package recorder_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/history/recorder"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// BenchmarkHistoryWrite: a generated desk of 2,000 tickets on sdsim, the
// real feed and a SQLite store; each op is one minute of a desk with 100
// changes a minute (status, priority, agent, tags: what rules look at),
// read by one sync, which is one change-feed page. Reported, with the
// recorder on and off:
//
//   - ms-per-page: the sync's wall time (the recorder's added cost is the
//     difference between on and off);
//   - desk-requests-per-page: what the sync asked of the desk (the
//     recorder adds none);
//   - bytes-per-change: the growth of the history's table and index on
//     SQLite (dbstat) per recorded change; index-bytes-per-change: the
//     index's part of it;
//   - MiB-30d-100-per-min: bytes-per-change times 4,320,000 changes
//     (30 days of 100 a minute): computed, not a 30-day run;
//   - json-bytes-per-ticket and compact-bytes-per-ticket: the mean size of
//     the changed tickets as sdclient.Ticket's own JSON and as the
//     history stores them (history.Marshal).
func BenchmarkHistoryWrite(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "recorder=off"
		if on {
			name = "recorder=on"
		}
		b.Run(name, func(b *testing.B) { benchHistoryWrite(b, on) })
	}
}

func benchHistoryWrite(b *testing.B, on bool) {
	path := filepath.Join(b.TempDir(), "state.db")
	st := testkit.Store(b, path)
	var recOpts []recorder.Option
	if on {
		recOpts = []recorder.Option{}
	}
	e := newEnv(b, st, recOpts)
	d := e.sim.Desk
	d.Generate(1, 2000, e.clk.Now())
	e.clk.Advance(time.Minute)
	e.sync() // the first full sync (the starting state) is not measured
	// A change in the starting state's second would replace its record
	// (same At and ticket) rather than add one.
	e.clk.Advance(time.Second)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	before, beforeIndex := historyBytes(b, raw, "ticket_history", "ticket_history_ticket"), historyBytes(b, raw, "ticket_history_ticket")
	recordsBefore := countRecords(b, st)

	ids := d.TicketIDs()
	rng := rand.New(rand.NewPCG(7, 7))
	var requests, jsonBytes, compactBytes, changed int
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for range 100 {
			id := ids[rng.IntN(len(ids))]
			d.UpdateTicket(id, func(t *sdsim.Ticket) {
				switch rng.IntN(4) {
				case 0:
					t.Status = []int{2, 3, 4}[rng.IntN(3)]
				case 1:
					t.Priority = 1 + rng.IntN(4)
				case 2:
					t.ResponderID = 0
				default:
					t.Tags = append(t.Tags, "bench")
				}
			})
			e.clk.Advance(600 * time.Millisecond)
		}
		e.clk.Advance(time.Second)
		b.StartTimer()
		start := time.Now()
		res := e.f.Sync(context.Background())
		elapsed += time.Since(start)
		b.StopTimer()
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		requests += res.Requests
		changed += len(res.ChangedTickets)

		for _, t := range res.ChangedTickets {
			full, _ := json.Marshal(t)
			compact, _ := history.Marshal(t)
			jsonBytes += len(full)
			compactBytes += len(compact)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms-per-page")
	b.ReportMetric(float64(requests)/float64(b.N), "desk-requests-per-page")
	if changed > 0 {
		b.ReportMetric(float64(jsonBytes)/float64(changed), "json-bytes-per-ticket")
		b.ReportMetric(float64(compactBytes)/float64(changed), "compact-bytes-per-ticket")
	}
	if !on {
		return
	}
	records := countRecords(b, st) - recordsBefore
	if records < changed {
		b.Fatalf("%d records for %d changes read", records, changed)
	}
	perChange := float64(historyBytes(b, raw, "ticket_history", "ticket_history_ticket")-before) / float64(records)
	b.ReportMetric(perChange, "bytes-per-change")
	b.ReportMetric(float64(historyBytes(b, raw, "ticket_history_ticket")-beforeIndex)/float64(records), "index-bytes-per-change")
	b.ReportMetric(perChange*100*60*24*30/(1<<20), "MiB-30d-100-per-min")
}

// historyBytes is the size of the named tables and indexes in the SQLite
// file, pages counted whole (what the file grows by).
func historyBytes(b *testing.B, db *sql.DB, names ...string) int64 {
	b.Helper()
	var total int64
	for _, name := range names {
		var n sql.NullInt64
		if err := db.QueryRow(`SELECT SUM(pgsize) FROM dbstat WHERE name = $1`, name).Scan(&n); err != nil {
			b.Fatal(err)
		}
		total += n.Int64
	}
	return total
}

func countRecords(b *testing.B, st *store.Store) int {
	b.Helper()
	n := 0
	if err := st.Scan(context.Background(), time.Time{}, time.Now().Add(1000*time.Hour), func(history.Record) error { n++; return nil }); err != nil {
		b.Fatal(err)
	}
	return n
}
