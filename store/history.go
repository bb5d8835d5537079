package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/sdclient"
)

// The store keeps the ticket history (table ticket_history) and is a
// history.Reader on both engines.
var _ history.Reader = (*Store)(nil)

// historyBatch bounds the records of one INSERT (5 parameters each) and the
// rows Scan reads per query.
const (
	historyBatch     = 200
	historyScanBatch = 5000
)

// historyRow is a record encoded for the table.
type historyRow struct {
	at   int64 // Unix microseconds
	id   int64
	gone bool
	open bool
	data []byte
}

// AppendHistory stores recs in one transaction (one feed sync's records).
// A record with the same At and ticket id as a stored one replaces it (two
// changes within the desk's one-second updated_at: the later one wins), as
// does the later of two such records in recs. A record without a ticket, or
// with ticket id 0, is an error, and nothing is stored.
func (s *Store) AppendHistory(ctx context.Context, recs []history.Record) error {
	rows := make([]historyRow, 0, len(recs))
	for i, r := range recs {
		if r.Ticket == nil || r.Ticket.ID == 0 {
			return s.wrap("append history", fmt.Errorf("record %d of %d has no ticket id", i+1, len(recs)))
		}
		data, err := history.Marshal(r.Ticket)
		if err != nil {
			return s.wrap("append history", err)
		}
		rows = append(rows, historyRow{at: micros(r.At), id: r.Ticket.ID, gone: r.Gone,
			open: !r.Gone && sdclient.IsOpenStatus(r.Ticket.Status), data: data})
	}
	// One statement must not touch a row twice (PostgreSQL refuses): keep
	// the last of each (at, id), in key order.
	slices.SortStableFunc(rows, func(a, b historyRow) int {
		if a.at != b.at {
			return cmpInt(a.at, b.at)
		}
		return cmpInt(a.id, b.id)
	})
	kept := rows[:0]
	for _, r := range rows {
		if n := len(kept); n > 0 && kept[n-1].at == r.at && kept[n-1].id == r.id {
			kept[n-1] = r
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i := 0; i < len(kept); i += historyBatch {
			batch := kept[i:min(i+historyBatch, len(kept))]
			var q strings.Builder
			q.WriteString(`INSERT INTO ticket_history (at, ticket_id, gone, open, data) VALUES `)
			args := make([]any, 0, 5*len(batch))
			for j, r := range batch {
				if j > 0 {
					q.WriteString(", ")
				}
				n := len(args)
				fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5)
				args = append(args, r.at, r.id, r.gone, r.open, r.data)
			}
			q.WriteString(` ON CONFLICT (at, ticket_id) DO UPDATE SET gone = excluded.gone, open = excluded.open, data = excluded.data`)
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("insert records: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return s.wrap("append history", err)
	}
	return nil
}

// Start is when the recorded history begins: its earliest record (zero
// time: none). After a prune it is the prune's horizon, where the tickets'
// states as of then were kept.
func (s *Store) Start(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MIN(at) FROM ticket_history`).Scan(&at); err != nil {
		return time.Time{}, s.wrap("read history start", err)
	}
	if !at.Valid {
		return time.Time{}, nil
	}
	return fromMicros(at.Int64), nil
}

// Scan calls fn for each record with from <= At < to, ordered by At then
// ticket id; fn's error stops it and is returned as is. It reads in
// batches, each its own query, so fn may take its time without holding a
// read open; records appended meanwhile after the last one read are seen.
func (s *Store) Scan(ctx context.Context, from, to time.Time, fn func(history.Record) error) error {
	lo, hi := micros(from), micros(to)
	var lastID int64 = -1 << 63
	for first := true; ; first = false {
		q := `SELECT at, ticket_id, gone, data FROM ticket_history WHERE at >= $1 AND at < $2
			ORDER BY at, ticket_id LIMIT $3`
		args := []any{lo, hi, historyScanBatch}
		if !first {
			q = `SELECT at, ticket_id, gone, data FROM ticket_history
				WHERE (at > $1 OR (at = $1 AND ticket_id > $4)) AND at < $2
				ORDER BY at, ticket_id LIMIT $3`
			args = append(args, lastID)
		}
		recs, err := s.scanBatch(ctx, q, args...)
		if err != nil {
			return s.wrap("scan history", err)
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(recs) < historyScanBatch {
			return nil
		}
		last := recs[len(recs)-1]
		lo, lastID = micros(last.At), last.Ticket.ID
	}
}

func (s *Store) scanBatch(ctx context.Context, q string, args ...any) ([]history.Record, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []history.Record
	for rows.Next() {
		var (
			at, id int64
			gone   bool
			data   []byte
		)
		if err := rows.Scan(&at, &id, &gone, &data); err != nil {
			return nil, err
		}
		t, err := history.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("record of ticket %d at %d: %w", id, at, err)
		}
		t.ID = id
		out = append(out, history.Record{At: fromMicros(at), Ticket: t, Gone: gone})
	}
	return out, rows.Err()
}

// HistoryLive reports which of ids the history holds as present: their
// latest record is not Gone. The recorder records the others' state as a
// full sync saw them (the starting state).
func (s *Store) HistoryLive(ctx context.Context, ids []int64) (map[int64]bool, error) {
	live := map[int64]bool{}
	for i := 0; i < len(ids); i += historyBatch {
		batch := ids[i:min(i+historyBatch, len(ids))]
		var q strings.Builder
		q.WriteString(`SELECT h.ticket_id FROM ticket_history h WHERE NOT h.gone AND h.ticket_id IN (`)
		args := make([]any, len(batch))
		for j, id := range batch {
			if j > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "$%d", j+1)
			args[j] = id
		}
		q.WriteString(`) AND h.at = (SELECT MAX(n.at) FROM ticket_history n WHERE n.ticket_id = h.ticket_id)`)
		got, err := column[int64](ctx, s.db, q.String(), args...)
		if err != nil {
			return nil, s.wrap("read live history tickets", err)
		}
		for _, id := range got {
			live[id] = true
		}
	}
	return live, nil
}

// PruneHistory forgets the history before horizon, at most about limit
// rows per call, each step its own short transaction, and reports how many
// rows it deleted or moved (0: nothing left to prune). Call it until it
// reports 0. It keeps what a replay from horizon needs: each ticket's
// latest record at or before horizon, moved to horizon (the ticket looked
// so from then on), unless that record says the ticket was gone or closed
// (closed tickets leave the replay's starting state, as they leave the
// mirror).
func (s *Store) PruneHistory(ctx context.Context, horizon time.Time, limit int) (int, error) {
	h := micros(horizon)
	steps := []struct{ what, q string }{
		// Records superseded by a later one at or before the horizon.
		{"delete superseded records", `DELETE FROM ticket_history WHERE (at, ticket_id) IN (
			SELECT o.at, o.ticket_id FROM ticket_history o WHERE o.at < $1 AND EXISTS (
				SELECT 1 FROM ticket_history n WHERE n.ticket_id = o.ticket_id AND n.at > o.at AND n.at <= $1)
			LIMIT $2)`},
		// Each ticket has one record left before the horizon at most.
		{"delete gone and closed records", `DELETE FROM ticket_history WHERE (at, ticket_id) IN (
			SELECT at, ticket_id FROM ticket_history WHERE at < $1 AND (gone OR NOT open) LIMIT $2)`},
		{"move states to the horizon", `UPDATE ticket_history SET at = $1 WHERE (at, ticket_id) IN (
			SELECT at, ticket_id FROM ticket_history WHERE at < $1 LIMIT $2)`},
	}
	total := 0
	for _, st := range steps {
		res, err := s.db.ExecContext(ctx, st.q, h, limit)
		if err != nil {
			return total, s.wrap("prune history: "+st.what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, s.wrap("prune history: "+st.what, err)
		}
		total += int(n)
		if int(n) >= limit {
			return total, nil // a step is done only when a call finds less than limit
		}
	}
	return total, nil
}

// micros is t in Unix microseconds, the history's time column.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ClearHistory deletes up to limit rows of the history and reports how many
// (0: none left); DESKBOT_HISTORY=0 keeps none.
func (s *Store) ClearHistory(ctx context.Context, limit int) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM ticket_history WHERE (at, ticket_id) IN (
		SELECT at, ticket_id FROM ticket_history LIMIT $1)`, limit)
	if err != nil {
		return 0, s.wrap("clear history", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.wrap("clear history", err)
	}
	return int(n), nil
}
