package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Cursor returns the value of the poll cursor name (for example the
// updated_since of an incremental ticket feed), and false if it was never set.
func (s *Store) Cursor(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM poll_cursors WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, s.wrap(fmt.Sprintf("read cursor %q", name), err)
	}
	return v, true, nil
}

// SetCursor stores value as the poll cursor name, replacing the old value.
func (s *Store) SetCursor(ctx context.Context, name, value string, now time.Time) error {
	op := fmt.Sprintf("set cursor %q", name)
	if name == "" {
		return s.wrap(op, errors.New("empty cursor name"))
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO poll_cursors (name, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		name, value, dbTime(now))
	return s.wrap(op, err)
}

// SeenEnvelope records the Slack envelope id at now and says whether it was
// already recorded less than ttl before (a redelivery to drop). Check and
// record are one atomic statement, so of several replicas handed the same
// envelope exactly one gets false. Expired ids are purged now and then.
func (s *Store) SeenEnvelope(ctx context.Context, id string, now time.Time, ttl time.Duration) (bool, error) {
	op := fmt.Sprintf("record envelope %q", id)
	switch {
	case id == "":
		return false, s.wrap(op, errors.New("empty envelope id"))
	case ttl <= 0:
		return false, s.wrap(op, fmt.Errorf("ttl %v: want a positive duration", ttl))
	}
	now = dbTime(now)
	if s.purgeDue(now) {
		if _, err := s.people.ExecContext(ctx, `DELETE FROM slack_envelopes WHERE expires_at <= $1`, now); err != nil {
			return false, s.wrap("purge expired envelopes", err)
		}
	}
	// The upsert touches the row only when the old record has expired: one
	// row affected means first sight (or sight after expiry), none a duplicate.
	n, err := affected(ctx, s.people, `INSERT INTO slack_envelopes (id, seen_at, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at
		WHERE slack_envelopes.expires_at <= excluded.seen_at`, id, now, dbTime(now.Add(ttl)))
	if err != nil {
		return false, s.wrap(op, err)
	}
	return n == 0, nil
}

// purgeDue says whether this call should purge expired envelopes.
func (s *Store) purgeDue(now time.Time) bool {
	s.purgeMu.Lock()
	defer s.purgeMu.Unlock()
	if !s.lastPurge.IsZero() && now.Sub(s.lastPurge) < s.purgeEvery && !now.Before(s.lastPurge) {
		return false
	}
	s.lastPurge = now
	return true
}

// SetAck records that by acknowledged the on-call page pageKey at at. Only
// the first acknowledgement counts: first is false (and nothing changes)
// when the page was already acknowledged, by anyone.
func (s *Store) SetAck(ctx context.Context, pageKey, by string, at time.Time) (bool, error) {
	op := fmt.Sprintf("acknowledge page %q", pageKey)
	if pageKey == "" {
		return false, s.wrap(op, errors.New("empty page key"))
	}
	n, err := affected(ctx, s.db, `INSERT INTO oncall_acks (page_key, acked_by, acked_at) VALUES ($1, $2, $3)
		ON CONFLICT (page_key) DO NOTHING`, pageKey, by, dbTime(at))
	if err != nil {
		return false, s.wrap(op, err)
	}
	return n == 1, nil
}

// Ack reports who acknowledged the page pageKey and when; ok is false while
// nobody has.
func (s *Store) Ack(ctx context.Context, pageKey string) (by string, at time.Time, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT acked_by, acked_at FROM oncall_acks WHERE page_key = $1`, pageKey).Scan(&by, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, s.wrap(fmt.Sprintf("read ack of page %q", pageKey), err)
	}
	return by, at.UTC(), true, nil
}
