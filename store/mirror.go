package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// MirrorState is the persisted state of one workspace's ticket mirror.
type MirrorState struct {
	// Cursor is the change feed's cursor, on the desk's clock: the next sync
	// asks for tickets updated_since Cursor. Zero: never synced.
	Cursor time.Time
	// TrashCursor is the cursor of the sweeps for deleted and spam tickets.
	TrashCursor time.Time
	// Complete is true once a full sync finished: the mirror then holds
	// every open ticket of the workspace.
	Complete bool
	// FullSyncAt is when the last full sync finished (deskbot's clock).
	FullSyncAt time.Time
	// Version counts the MirrorApply calls of the workspace; MirrorApply
	// ignores the caller's value and stores the old one plus one.
	Version int64
}

// MirrorLoad returns every mirrored ticket of workspace ws (0 is the
// account's default workspace), ordered by id, and the workspace's state
// (the zero state when it was never applied).
//
// Tickets and state are read in one read-only transaction, so they are one
// consistent snapshot: the state is that of the last MirrorApply whose
// tickets are included.
func (s *Store) MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, MirrorState, error) {
	op := fmt.Sprintf("load mirror of workspace %d", ws)
	var (
		tickets []*sdclient.Ticket
		st      MirrorState
	)
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		states, err := s.mirrorStates(ctx, tx, `WHERE workspace_id = $1`, ws)
		if err != nil {
			return err
		}
		st = states[ws]
		rows, err := tx.QueryContext(ctx, `SELECT id, data FROM mirror_tickets WHERE workspace_id = $1 ORDER BY id`, ws)
		if err != nil {
			return fmt.Errorf("read tickets: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id   int64
				data sql.RawBytes
			)
			if err := rows.Scan(&id, &data); err != nil {
				return fmt.Errorf("read tickets: %w", err)
			}
			t := new(sdclient.Ticket)
			if err := json.Unmarshal(data, t); err != nil {
				return fmt.Errorf("decode ticket %d: %w", id, err)
			}
			tickets = append(tickets, t)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read tickets: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, MirrorState{}, s.wrap(op, err)
	}
	return tickets, st, nil
}

// MirrorStates returns the state of every workspace that has one.
func (s *Store) MirrorStates(ctx context.Context) (map[int64]MirrorState, error) {
	states, err := s.mirrorStates(ctx, s.db, ``)
	if err != nil {
		return nil, s.wrap("read mirror states", err)
	}
	return states, nil
}

// mirrorStates reads the rows of mirror_state that the clause where selects.
func (s *Store) mirrorStates(ctx context.Context, q querier, where string, args ...any) (map[int64]MirrorState, error) {
	rows, err := q.QueryContext(ctx, `SELECT workspace_id, cursor, trash_cursor, complete, full_sync_at, version
		FROM mirror_state `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	defer rows.Close()
	out := map[int64]MirrorState{}
	for rows.Next() {
		var (
			ws                      int64
			cursor, trash, fullSync sql.NullTime
			st                      MirrorState
		)
		if err := rows.Scan(&ws, &cursor, &trash, &st.Complete, &fullSync, &st.Version); err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
		st.Cursor, st.TrashCursor, st.FullSyncAt = utc(cursor), utc(trash), utc(fullSync)
		out[ws] = st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	return out, nil
}

// mirrorRow is a ticket of MirrorApply, encoded before the transaction.
type mirrorRow struct {
	id      int64
	updated time.Time
	data    string
}

// MirrorApply, in one transaction: upserts every ticket of put into
// workspace ws (a stored ticket is replaced only when the new one's
// UpdatedAt is not older than the stored one's: an older copy, e.g. from a
// lagging search index, never overwrites a newer one), deletes the tickets
// whose ids are in del, and stores st as the workspace's state with its
// Version set to the stored version plus one, which it returns.
//
// A ticket stored in another workspace moves to ws (if the new copy is not
// older). Deletes apply to workspace ws only: an id of del that lives in
// another workspace's mirror (the ticket moved there) stays there. An id
// both in put and in del ends up deleted. Nil tickets in put are skipped; a
// ticket with id 0 is an error, and nothing is applied.
//
// Several replicas may apply at once: the state row is written first, so
// applies of one workspace run one after another and get distinct
// versions, and every apply writes its tickets in ascending id order, so
// applies of different workspaces cannot deadlock on PostgreSQL.
func (s *Store) MirrorApply(ctx context.Context, ws int64, put []*sdclient.Ticket, del []int64, st MirrorState) (int64, error) {
	op := fmt.Sprintf("apply mirror of workspace %d", ws)
	rows, err := mirrorRows(put)
	if err != nil {
		return 0, s.wrap(op, err)
	}
	dels := slices.Clone(del)
	slices.Sort(dels)
	dels = slices.Compact(dels)

	var version int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO mirror_state
			(workspace_id, cursor, trash_cursor, complete, full_sync_at, version)
			VALUES ($1, $2, $3, $4, $5, 1)
			ON CONFLICT (workspace_id) DO UPDATE SET cursor = excluded.cursor, trash_cursor = excluded.trash_cursor,
				complete = excluded.complete, full_sync_at = excluded.full_sync_at, version = mirror_state.version + 1
			RETURNING version`,
			ws, nullTime(st.Cursor), nullTime(st.TrashCursor), st.Complete, nullTime(st.FullSyncAt)).Scan(&version); err != nil {
			return fmt.Errorf("store state: %w", err)
		}
		return writeMirrorTickets(ctx, tx, ws, rows, dels)
	})
	if err != nil {
		return 0, s.wrap(op, err)
	}
	return version, nil
}

// mirrorRows encodes the tickets of put (nil ones skipped; id 0 is an
// error), sorted by id, one row per id.
func mirrorRows(put []*sdclient.Ticket) ([]mirrorRow, error) {
	rows := make([]mirrorRow, 0, len(put))
	for i, t := range put {
		if t == nil {
			continue
		}
		if t.ID == 0 {
			return nil, fmt.Errorf("ticket %d of %d to store has id 0", i+1, len(put))
		}
		data, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encode ticket %d: %w", t.ID, err)
		}
		rows = append(rows, mirrorRow{id: t.ID, updated: dbTime(t.UpdatedAt), data: string(data)})
	}
	// Of several copies of one ticket in put, keep the one that applying
	// them in order would leave: the last of the newest. (One statement
	// must not touch a row twice, and PostgreSQL refuses to.)
	slices.SortStableFunc(rows, func(a, b mirrorRow) int { return cmp.Compare(a.id, b.id) })
	kept := rows[:0]
	for _, r := range rows {
		if n := len(kept); n > 0 && kept[n-1].id == r.id {
			if !r.updated.Before(kept[n-1].updated) {
				kept[n-1] = r
			}
			continue
		}
		kept = append(kept, r)
	}
	return kept, nil
}

// writeMirrorTickets writes rows and deletes dels (both sorted by id,
// distinct) in workspace ws, in ascending id order: the puts up to the
// next delete in one statement.
func writeMirrorTickets(ctx context.Context, tx *sql.Tx, ws int64, rows []mirrorRow, dels []int64) error {
	var remove *sql.Stmt
	defer func() {
		if remove != nil {
			_ = remove.Close()
		}
	}()
	for i, j := 0, 0; i < len(rows) || j < len(dels); {
		if j == len(dels) || (i < len(rows) && rows[i].id <= dels[j]) {
			end := i + 1
			for end < len(rows) && end-i < upsertBatch && (j == len(dels) || rows[end].id <= dels[j]) {
				end++
			}
			if err := upsertTickets(ctx, tx, ws, rows[i:end]); err != nil {
				return err
			}
			i = end
			continue
		}
		id := dels[j]
		j++
		if remove == nil {
			var err error
			if remove, err = tx.PrepareContext(ctx, `DELETE FROM mirror_tickets WHERE id = $1 AND workspace_id = $2`); err != nil {
				return fmt.Errorf("prepare delete: %w", err)
			}
		}
		if _, err := remove.ExecContext(ctx, id, ws); err != nil {
			return fmt.Errorf("delete ticket %d: %w", id, err)
		}
	}
	return nil
}

// readTx runs fn in a read-only transaction that sees one snapshot of the
// database: REPEATABLE READ on PostgreSQL; on SQLite a deferred (not
// IMMEDIATE) transaction, which in WAL mode reads one snapshot without
// taking the write lock.
func (s *Store) readTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.tx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}, fn)
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: dbTime(t), Valid: true}
}

// upsertBatch bounds the tickets of one INSERT (4 parameters each).
const upsertBatch = 200

// upsertTickets upserts rows, sorted by id with distinct ids, into
// workspace ws in one statement. PostgreSQL inserts the rows of VALUES in
// their order, so rows are locked in ascending id order.
func upsertTickets(ctx context.Context, tx *sql.Tx, ws int64, rows []mirrorRow) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO mirror_tickets (id, workspace_id, updated_at, data) VALUES `)
	args := make([]any, 0, 1+3*len(rows))
	args = append(args, ws)
	for i, r := range rows {
		if i > 0 {
			q.WriteByte(',')
		}
		n := len(args)
		fmt.Fprintf(&q, "($%d, $1, $%d, $%d)", n+1, n+2, n+3)
		args = append(args, r.id, r.updated, r.data)
	}
	q.WriteString(` ON CONFLICT (id) DO UPDATE SET workspace_id = excluded.workspace_id,
		updated_at = excluded.updated_at, data = excluded.data
		WHERE mirror_tickets.updated_at <= excluded.updated_at`)
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		if len(rows) == 1 {
			return fmt.Errorf("store ticket %d: %w", rows[0].id, err)
		}
		return fmt.Errorf("store tickets %d to %d: %w", rows[0].id, rows[len(rows)-1].id, err)
	}
	return nil
}

// MirrorAsOf says when a mirror whose change feed cursor is cursor was
// complete up to, at now: "as of 09:41:12 UTC", with the date when it is
// not today's. Whoever tells a person how fresh the mirror is (the bot's
// answers, the scheduler's explanations) says it so.
func MirrorAsOf(cursor, now time.Time) string {
	c, n := cursor.UTC(), now.UTC()
	if c.Format(time.DateOnly) == n.Format(time.DateOnly) {
		return "as of " + c.Format(time.TimeOnly) + " UTC"
	}
	return "as of " + c.Format(time.DateTime) + " UTC"
}
