package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/oncall"
)

// FiringRow is one firing of the ledger as the status pages show it.
type FiringRow struct {
	ID        int64
	Rule      string
	TicketID  int64
	Episode   int64
	Seq       int64
	Done      bool      // state done; else pending
	StartedAt time.Time // first claimed
	MatchedAt time.Time // when the ticket began to match in the episode (StartedAt for firings recorded before it was kept)
	FiredAt   time.Time // finished; zero while pending
	Attempts  int       // more than 1: resumed or retried
	LastError string    // why the last attempt failed, while pending
	Released  bool      // the last attempt was given up before acting (deferred)
	Actions   int       // actions recorded done
}

// FiringFilter narrows RecentFirings; zero values do not filter.
type FiringFilter struct {
	Rule     string
	TicketID int64
	// State is "done", "pending" or "" (both).
	State string
	Limit int // at most this many, newest first; 0: 100
}

// RecentFirings reads the ledger's firings newest first, read-only (one
// statement, no lock), for the status pages.
func (s *Store) RecentFirings(ctx context.Context, f FiringFilter) ([]FiringRow, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Rule != "" {
		add("f.rule = $%d", f.Rule)
	}
	if f.TicketID != 0 {
		add("f.ticket_id = $%d", f.TicketID)
	}
	if f.State != "" {
		add("f.state = $%d", f.State)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT f.id, f.rule, f.ticket_id, f.episode, f.seq, f.state, f.started_at, f.matched_at, f.fired_at, f.attempts,
		f.last_error, f.released, (SELECT COUNT(*) FROM ledger_actions a WHERE a.firing_id = f.id)
		FROM ledger_firings f`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(" ORDER BY f.id DESC LIMIT %d", limit)
	out, err := queryRows(ctx, s.db, func(rows *sql.Rows) (FiringRow, error) {
		var (
			r                       FiringRow
			state                   string
			started, matched, fired sql.NullTime
			lastErr                 sql.NullString
		)
		err := rows.Scan(&r.ID, &r.Rule, &r.TicketID, &r.Episode, &r.Seq, &state, &started, &matched, &fired,
			&r.Attempts, &lastErr, &r.Released, &r.Actions)
		r.Done, r.StartedAt, r.FiredAt, r.LastError = state == "done", utc(started), utc(fired), lastErr.String
		r.MatchedAt = r.StartedAt
		if matched.Valid {
			r.MatchedAt = utc(matched)
		}
		return r, err
	}, q, args...)
	return out, s.wrap("read recent firings", err)
}

// OpenPages returns up to limit (all if limit <= 0) on-call pages that are
// not done, oldest first, for the status pages.
func (s *Store) OpenPages(ctx context.Context, limit int) ([]oncall.Page, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version, state FROM oncall_pages
		WHERE NOT done ORDER BY page_key LIMIT $1`, limit)
	if err != nil {
		return nil, s.wrap("read open pages", err)
	}
	pages, err := scanPages(rows)
	if err != nil {
		return nil, s.wrap("read open pages", err)
	}
	slices.SortFunc(pages, func(a, b oncall.Page) int { return a.StartedAt.Compare(b.StartedAt) })
	return pages, nil
}

// HourCount is how many firings of a rule finished in one hour.
type HourCount struct {
	Rule string
	Hour int // hours since the since of FiredPerHour: 0 is the first
	N    int
}

// FiredPerHour counts the firings that finished at or after since, by
// rule (only rule's, when not "") and by whole hours since since, counted
// in the database (a chart over 10,000 firings reads a few hundred rows).
func (s *Store) FiredPerHour(ctx context.Context, since time.Time, rule string) ([]HourCount, error) {
	hour := `CAST((julianday(fired_at) - julianday($1)) * 24 AS INTEGER)`
	if s.engine == Postgres {
		hour = `CAST(FLOOR(EXTRACT(EPOCH FROM (fired_at - $1::timestamp)) / 3600) AS INTEGER)`
	}
	q := `SELECT rule, ` + hour + ` AS h, COUNT(*) FROM ledger_firings
		WHERE state = 'done' AND fired_at >= $1`
	args := []any{dbTime(since)}
	if rule != "" {
		q += ` AND rule = $2`
		args = append(args, rule)
	}
	q += ` GROUP BY rule, h`
	out, err := queryRows(ctx, s.db, func(rows *sql.Rows) (HourCount, error) {
		var c HourCount
		err := rows.Scan(&c.Rule, &c.Hour, &c.N)
		return c, err
	}, q, args...)
	return out, s.wrap("count firings per hour", err)
}
