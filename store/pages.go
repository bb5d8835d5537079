package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/oncall"
)

var _ oncall.PageStore = (*Store)(nil)

// CreatePage stores the on-call page p at version 1 unless a page with its
// key exists (created is false then, and nothing changes): a rule firing
// twice in one episode never starts two escalations.
func (s *Store) CreatePage(ctx context.Context, p oncall.Page) (bool, error) {
	op := fmt.Sprintf("create page %q", p.Key)
	if p.Key == "" {
		return false, s.wrap(op, errors.New("empty page key"))
	}
	state, err := json.Marshal(p)
	if err != nil {
		return false, s.wrap(op, err)
	}
	n, err := affected(ctx, s.db, `INSERT INTO oncall_pages
		(page_key, ticket_id, policy, started_at, next_at, done, version, state)
		VALUES ($1, $2, $3, $4, $5, $6, 1, $7) ON CONFLICT (page_key) DO NOTHING`,
		p.Key, p.TicketID, p.Policy, dbTime(p.StartedAt), dbTime(p.NextAt), p.Done, string(state))
	if err != nil {
		return false, s.wrap(op, err)
	}
	return n == 1, nil
}

// Page reads the on-call page key; ok is false if there is none.
func (s *Store) Page(ctx context.Context, key string) (oncall.Page, bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT version, state FROM oncall_pages WHERE page_key = $1`, key)
	if err != nil {
		return oncall.Page{}, false, s.wrap(fmt.Sprintf("read page %q", key), err)
	}
	pages, err := scanPages(rows)
	if err != nil || len(pages) == 0 {
		return oncall.Page{}, false, s.wrap(fmt.Sprintf("read page %q", key), err)
	}
	return pages[0], true, nil
}

// DuePages returns up to limit (all if limit <= 0) on-call pages that are
// not done and whose next step is due at or before now, earliest first.
func (s *Store) DuePages(ctx context.Context, now time.Time, limit int) ([]oncall.Page, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version, state FROM oncall_pages
		WHERE NOT done AND next_at <= $1 ORDER BY next_at, page_key LIMIT $2`, dbTime(now), limit)
	if err != nil {
		return nil, s.wrap("read due pages", err)
	}
	pages, err := scanPages(rows)
	return pages, s.wrap("read due pages", err)
}

// TicketPages returns the on-call pages of a ticket, newest first.
func (s *Store) TicketPages(ctx context.Context, ticketID int64) ([]oncall.Page, error) {
	op := fmt.Sprintf("read pages of ticket %d", ticketID)
	rows, err := s.db.QueryContext(ctx, `SELECT version, state FROM oncall_pages
		WHERE ticket_id = $1 ORDER BY started_at DESC, page_key DESC`, ticketID)
	if err != nil {
		return nil, s.wrap(op, err)
	}
	pages, err := scanPages(rows)
	return pages, s.wrap(op, err)
}

// SwapPage replaces the stored page p.Key with p if its version is still
// p.Version, and bumps the version: one conditional UPDATE, so of several
// replicas swapping the same version exactly one wins. An acknowledgement
// is also recorded where Ack reads it, in the same transaction.
func (s *Store) SwapPage(ctx context.Context, p oncall.Page) (bool, error) {
	op := fmt.Sprintf("update page %q", p.Key)
	state, err := json.Marshal(p)
	if err != nil {
		return false, s.wrap(op, err)
	}
	var won bool
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := affected(ctx, tx, `UPDATE oncall_pages
			SET ticket_id = $3, policy = $4, started_at = $5, next_at = $6, done = $7, version = version + 1, state = $8
			WHERE page_key = $1 AND version = $2`,
			p.Key, p.Version, p.TicketID, p.Policy, dbTime(p.StartedAt), dbTime(p.NextAt), p.Done, string(state))
		if err != nil {
			return err
		}
		if n == 0 {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM oncall_pages WHERE page_key = $1`, p.Key).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return oncall.ErrNoPage
			}
			return err
		}
		won = true
		if p.Acked() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO oncall_acks (page_key, acked_by, acked_at) VALUES ($1, $2, $3)
				ON CONFLICT (page_key) DO NOTHING`, p.Key, p.AckedBy, dbTime(p.AckedAt)); err != nil {
				return fmt.Errorf("record acknowledgement: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return false, s.wrap(op, err)
	}
	return won, nil
}

func scanPages(rows *sql.Rows) ([]oncall.Page, error) {
	defer rows.Close()
	var out []oncall.Page
	for rows.Next() {
		var (
			version int64
			state   string
		)
		if err := rows.Scan(&version, &state); err != nil {
			return nil, err
		}
		var p oncall.Page
		if err := json.Unmarshal([]byte(state), &p); err != nil {
			return nil, fmt.Errorf("decode page: %w", err)
		}
		p.Version = version
		out = append(out, p)
	}
	return out, rows.Err()
}
