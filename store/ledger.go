package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// ErrUnknownFiring is returned (wrapped) by ActionDone, Finish and Release
// for a firing id the ledger never issued.
var ErrUnknownFiring = errors.New("unknown firing")

type currentFiring struct {
	id         int64
	episode    int64
	seq        int64
	state      rules.FiringStatus
	leaseUntil sql.NullTime
	firedAt    sql.NullTime
	startedAt  sql.NullTime
	attempts   int
	epoch      int64 // the leadership epoch of the claim that holds it
	released   bool
}

// staleLease voids the lease of a pending claim that an older leadership
// epoch than ours made and did not release: its holder is dead or no
// longer leads, so its lease binds no one (a released claim's lease_until
// is when it may be retried, which holds whoever leads).
func staleLease(leaseUntil *sql.NullTime, pending, released bool, epoch, ours int64) {
	if pending && !released && epoch < ours {
		*leaseUntil = sql.NullTime{}
	}
}

// Claim reserves the right to fire key at now under once. The claim is
// pending until Finish; a pending claim older than lease may be taken over
// by another caller (Resumed).
//
// With a Leadership taken on the store, the claim records its epoch and is
// written only while the store's epoch is still ours (else an error
// wrapping ErrNotLeader, and this process leads no more); a pending claim
// of an older epoch that was not released holds no lease: it is taken over
// at once. Whether a claim may win is rules'
// Once.NextEligible on the (rule, ticket)'s record; this says what it then
// does.
//
// In one transaction (the (rule, ticket) row locked FOR UPDATE on
// PostgreSQL, the database write-locked by BEGIN IMMEDIATE on SQLite):
//   - no episode yet, or the episode is closed: open episode n+1 with a
//     pending firing seq 1 (Won). Under OnceTicket a ticket that ever had a
//     firing of the rule never opens another one: a done firing blocks
//     forever, and a firing left pending (by a crash) is taken over when its
//     lease has run out, whatever became of its episode, so that a
//     half-performed firing is completed rather than repeated or lost;
//   - open episode, firing pending: taken over if its lease has run out
//     (Won, Resumed, Done), otherwise not Won;
//   - open episode, firing done: OnceEvery starts firing seq+1 once
//     now >= fired_at + Period; otherwise not Won.
//
// A Firing that is not Won still carries the current episode, seq and
// firing id, for logs.
func (s *Store) Claim(ctx context.Context, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration) (rules.Firing, error) {
	return s.ClaimSince(ctx, key, once, now, lease, now)
}

// checkClaim says what is wrong with a claim's arguments, if anything.
func checkClaim(key rules.FiringKey, once rules.Once, lease time.Duration) error {
	switch {
	case key.Rule == "":
		return errors.New("empty rule name")
	case lease <= 0:
		return fmt.Errorf("lease %v: want a positive duration", lease)
	case once.Mode == rules.OnceEvery && once.Period <= 0:
		return fmt.Errorf("once every %v: want a positive period", once.Period)
	case once.Mode != rules.OnceEpisode && once.Mode != rules.OnceTicket && once.Mode != rules.OnceEvery:
		return fmt.Errorf("unknown once mode %d", once.Mode)
	}
	return nil
}

// ClaimSince is Claim recording, with a new firing, since: when the ticket
// began to match the rule in this episode (the status pages measure how
// long a firing took from it). A zero since, or one after now, is now. A
// firing taken over keeps the since it was first claimed with.
func (s *Store) ClaimSince(ctx context.Context, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration, since time.Time) (rules.Firing, error) {
	op := fmt.Sprintf("claim rule %q ticket %d", key.Rule, key.TicketID)
	if err := checkClaim(key, once, lease); err != nil {
		return rules.Firing{}, s.wrap(op, err)
	}
	now = dbTime(now)
	if since.IsZero() || since.After(now) {
		since = now
	}
	since = dbTime(since)
	ours, err := s.claimEpoch()
	if err != nil {
		return rules.Firing{}, s.wrap(op, err)
	}

	// Fast path: most claims are for tickets still matching whose firing is
	// done or held. One read-only statement decides those without taking a
	// lock; a "not Won" read from a committed snapshot is a correct answer
	// as of that read. Anything that would win is decided again under lock.
	snap, err := s.readEpisode(ctx, s.db, key, false)
	if err != nil {
		return rules.Firing{}, s.wrap(op, err)
	}
	if snap.exists && decide(snap, once, now).kind == stayPut {
		return snap.firing(key), nil
	}

	var f rules.Firing
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.fence(ctx, tx, ours); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_episodes (rule, ticket_id, episode, is_open)
			VALUES ($1, $2, 0, FALSE) ON CONFLICT (rule, ticket_id) DO NOTHING`, key.Rule, key.TicketID); err != nil {
			return fmt.Errorf("insert episode row: %w", err)
		}
		ep, err := s.readEpisode(ctx, tx, key, s.engine == Postgres)
		if err != nil {
			return err
		}
		f = ep.firing(key)
		switch d := decide(ep, once, now); d.kind {
		case newEpisode:
			return s.startFiring(ctx, tx, &f, ep.episode+1, 1, now, since, lease, ours)
		case newFiring:
			return s.startFiring(ctx, tx, &f, ep.episode, d.seq, now, since, lease, ours)
		case takeOver:
			return s.takeOver(ctx, tx, &f, ep.cur, !ep.open, now, lease, ours)
		}
		return nil
	})
	if err != nil {
		return rules.Firing{}, s.wrap(op, err)
	}
	return f, nil
}

// episodeRow is a (rule, ticket)'s row with its current firing.
type episodeRow struct {
	exists  bool
	episode int64
	open    bool
	cur     *currentFiring // nil if the rule never claimed the ticket
}

func (e episodeRow) firing(key rules.FiringKey) rules.Firing {
	f := rules.Firing{Key: key, Episode: e.episode}
	if e.cur != nil {
		f.ID, f.Seq = e.cur.id, e.cur.seq
	}
	return f
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readEpisode reads key's episode row and current firing in one statement;
// lock takes the episode row FOR UPDATE (PostgreSQL). The lease of a
// claim of an older epoch than this process's is void (staleLease).
func (s *Store) readEpisode(ctx context.Context, q queryRower, key rules.FiringKey, lock bool) (episodeRow, error) {
	if lock {
		// Lock first, then read in a second statement: under READ
		// COMMITTED that statement's snapshot includes whatever the
		// previous lock holder committed, also in ledger_firings (a
		// joined SELECT ... FOR UPDATE would re-check only the locked row
		// and could see a stale firing).
		var one int
		if err := q.QueryRowContext(ctx, `SELECT 1 FROM ledger_episodes WHERE rule = $1 AND ticket_id = $2 FOR UPDATE`,
			key.Rule, key.TicketID).Scan(&one); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return episodeRow{}, fmt.Errorf("lock episode: %w", err)
		}
	}
	query := `SELECT e.episode, e.is_open, f.id, f.episode, f.seq, f.state, f.lease_until, f.fired_at, f.started_at,
		COALESCE(f.attempts, 0), COALESCE(f.epoch, 0), COALESCE(f.released, FALSE)
		FROM ledger_episodes e LEFT JOIN ledger_firings f ON f.id = e.firing_id
		WHERE e.rule = $1 AND e.ticket_id = $2`
	var (
		ep           episodeRow
		id, fep, seq sql.NullInt64
		state        sql.NullString
		c            currentFiring
	)
	err := q.QueryRowContext(ctx, query, key.Rule, key.TicketID).Scan(
		&ep.episode, &ep.open, &id, &fep, &seq, &state, &c.leaseUntil, &c.firedAt, &c.startedAt, &c.attempts, &c.epoch, &c.released)
	if errors.Is(err, sql.ErrNoRows) {
		return episodeRow{}, nil
	}
	if err != nil {
		return episodeRow{}, fmt.Errorf("read episode: %w", err)
	}
	ep.exists = true
	if id.Valid {
		c.id, c.episode, c.seq, c.state = id.Int64, fep.Int64, seq.Int64, rules.FiringStatus(state.String)
		staleLease(&c.leaseUntil, c.state == rules.FiringPending, c.released, c.epoch, s.readEpoch())
		ep.cur = &c
	}
	return ep, nil
}

type decisionKind int

const (
	stayPut    decisionKind = iota // not Won
	newEpisode                     // open episode n+1, firing seq 1
	newFiring                      // firing seq in the open episode
	takeOver                       // resume the stale pending firing
)

type decision struct {
	kind decisionKind
	seq  int64
}

// record is the row as the rules' once logic sees it.
func (e episodeRow) record() rules.FiringRecord {
	r := rules.FiringRecord{Episode: e.episode, Open: e.open}
	if c := e.cur; c != nil {
		r.FiringID, r.Seq, r.State = c.id, c.seq, c.state
		r.LeaseUntil, r.FiredAt = utc(c.leaseUntil), utc(c.firedAt)
	}
	return r
}

// decide applies the ledger's rule book (see Claim) to a row: whether a
// claim wins is once.MayFire; what it then does follows from the row.
func decide(ep episodeRow, once rules.Once, now time.Time) decision {
	cur := ep.cur
	switch {
	case !once.MayFire(ep.record(), now):
		return decision{kind: stayPut}
	case cur != nil && cur.state == rules.FiringPending && (ep.open || once.Mode == rules.OnceTicket):
		// Under OnceTicket even a closed episode's stale firing is
		// completed (reopening it) rather than a new one started.
		return decision{kind: takeOver}
	case !ep.open:
		return decision{kind: newEpisode}
	case cur == nil:
		// An open episode always has a firing; repair rather than fail.
		return decision{kind: newFiring, seq: 1}
	}
	return decision{kind: newFiring, seq: cur.seq + 1}
}

// startFiring inserts a pending firing (episode, seq), matching since
// since, and makes it current;
// a new episode number opens the episode.
func (s *Store) startFiring(ctx context.Context, tx *sql.Tx, f *rules.Firing, episode, seq int64, now, since time.Time, lease time.Duration, epoch int64) error {
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO ledger_firings
		(rule, ticket_id, episode, seq, state, claimed_at, started_at, lease_until, attempts, epoch, matched_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $5, $6, 1, $7, $8) RETURNING id`,
		f.Key.Rule, f.Key.TicketID, episode, seq, now, dbTime(now.Add(lease)), epoch, since).Scan(&id); err != nil {
		return fmt.Errorf("insert firing: %w", err)
	}
	var err error
	if episode != f.Episode {
		_, err = tx.ExecContext(ctx, `UPDATE ledger_episodes
			SET episode = $3, is_open = TRUE, firing_id = $4, started_at = $5, ended_at = NULL
			WHERE rule = $1 AND ticket_id = $2`, f.Key.Rule, f.Key.TicketID, episode, id, now)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE ledger_episodes SET firing_id = $3
			WHERE rule = $1 AND ticket_id = $2`, f.Key.Rule, f.Key.TicketID, id)
	}
	if err != nil {
		return fmt.Errorf("update episode: %w", err)
	}
	f.ID, f.Episode, f.Seq, f.Won, f.Started, f.Attempts = id, episode, seq, true, now, 1
	return nil
}

// takeOver renews the lease of a stale pending firing for a new holder (in
// its epoch) and reports the actions already done. reopen reopens its
// closed episode.
func (s *Store) takeOver(ctx context.Context, tx *sql.Tx, f *rules.Firing, cur *currentFiring, reopen bool, now time.Time, lease time.Duration, epoch int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE ledger_firings
		SET claimed_at = $2, lease_until = $3, attempts = attempts + 1, released = FALSE, epoch = $4 WHERE id = $1`,
		cur.id, now, dbTime(now.Add(lease)), epoch); err != nil {
		return fmt.Errorf("take over firing %d: %w", cur.id, err)
	}
	if reopen {
		if _, err := tx.ExecContext(ctx, `UPDATE ledger_episodes SET is_open = TRUE, ended_at = NULL
			WHERE rule = $1 AND ticket_id = $2`, f.Key.Rule, f.Key.TicketID); err != nil {
			return fmt.Errorf("reopen episode: %w", err)
		}
	}
	done, err := doneActions(ctx, tx, cur.id)
	if err != nil {
		return err
	}
	f.ID, f.Episode, f.Seq, f.Won, f.Resumed, f.Done = cur.id, cur.episode, cur.seq, true, true, done
	f.Started, f.Attempts = utc(cur.startedAt), cur.attempts+1
	return nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func doneActions(ctx context.Context, q querier, firingID int64) ([]int, error) {
	done, err := column[int](ctx, q, `SELECT action FROM ledger_actions WHERE firing_id = $1 ORDER BY action`, firingID)
	if err != nil {
		return nil, fmt.Errorf("read done actions of firing %d: %w", firingID, err)
	}
	return done, nil
}

// column runs a query of one column and returns its values, in order.
func column[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	return queryRows(ctx, q, func(rows *sql.Rows) (T, error) {
		var v T
		err := rows.Scan(&v)
		return v, err
	}, query, args...)
}

// queryRows runs a query and returns its rows as scan reads them, in
// order.
func queryRows[T any](ctx context.Context, q querier, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ActionDone records that action i of the firing reached its target. It is
// idempotent, and durable when it returns.
//
// With a Leadership taken on the store it is fenced like Claim: a process
// that no longer leads is refused (ErrNotLeader), so that a leader deposed
// unnoticed stops after the action under way; the new leader, which took
// the firing over at once, finds that action on the desk (its marker)
// instead of repeating it.
func (s *Store) ActionDone(ctx context.Context, firingID int64, i int) error {
	op := fmt.Sprintf("record action %d of firing %d done", i, firingID)
	if i < 0 {
		return s.wrap(op, errors.New("negative action index"))
	}
	ours, err := s.claimEpoch()
	if err != nil {
		return s.wrap(op, err)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.fence(ctx, tx, ours); err != nil {
			return err
		}
		n, err := affected(ctx, tx, `INSERT INTO ledger_actions (firing_id, action, done_at)
			SELECT id, $2, $3 FROM ledger_firings WHERE id = $1
			ON CONFLICT (firing_id, action) DO NOTHING`, firingID, i, dbTime(s.now()))
		if err != nil || n == 1 {
			return err
		}
		return mustExist(ctx, tx, firingID)
	})
	return s.wrap(op, err)
}

// mustExist tells a firing that is already in the wanted state from one
// that does not exist (ErrUnknownFiring).
func mustExist(ctx context.Context, tx *sql.Tx, firingID int64) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM ledger_firings WHERE id = $1`, firingID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrUnknownFiring
	}
	return err
}

// Finish marks the firing done at now; now becomes the (rule, ticket)'s last
// firing time, from which OnceEvery counts its period. Finishing a done
// firing again changes nothing.
//
// On PostgreSQL it locks the episode row before the firing row, the order
// Claim uses, so that a Finish racing a take-over cannot deadlock.
func (s *Store) Finish(ctx context.Context, firingID int64, now time.Time) error {
	now = dbTime(now)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var rule string
		var ticketID int64
		err := tx.QueryRowContext(ctx, `SELECT rule, ticket_id FROM ledger_firings WHERE id = $1`, firingID).Scan(&rule, &ticketID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrUnknownFiring
		}
		if err != nil {
			return err
		}
		if s.engine == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT 1 FROM ledger_episodes WHERE rule = $1 AND ticket_id = $2 FOR UPDATE`,
				rule, ticketID); err != nil {
				return err
			}
		}
		n, err := affected(ctx, tx, `UPDATE ledger_firings SET state = 'done', fired_at = $2, lease_until = NULL, last_error = NULL
			WHERE id = $1 AND state = 'pending'`, firingID, now)
		if err != nil || n == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE ledger_episodes SET last_fired_at = $3
			WHERE rule = $1 AND ticket_id = $2 AND (last_fired_at IS NULL OR last_fired_at < $3)`, rule, ticketID, now)
		return err
	})
	return s.wrap(fmt.Sprintf("finish firing %d", firingID), err)
}

// Release gives up a pending claim until retryAt (the zero time: at once):
// its lease then ends, so a Claim from retryAt on takes it over (Resumed,
// with its Done list) instead of waiting for the lease, and no Claim before
// retryAt does. reason is kept as the firing's LastError. Releasing a done
// firing changes nothing.
func (s *Store) Release(ctx context.Context, firingID int64, retryAt time.Time, reason string) error {
	var until sql.NullTime
	if !retryAt.IsZero() {
		until = sql.NullTime{Time: dbTime(retryAt), Valid: true}
	}
	var why sql.NullString
	if reason != "" {
		why = sql.NullString{String: reason, Valid: true}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := affected(ctx, tx, `UPDATE ledger_firings SET lease_until = $2, last_error = $3, released = TRUE
			WHERE id = $1 AND state = 'pending'`, firingID, until, why)
		if err != nil || n == 1 {
			return err
		}
		return mustExist(ctx, tx, firingID)
	})
	return s.wrap(fmt.Sprintf("release firing %d", firingID), err)
}

// endBatch bounds the number of parameters of one UPDATE in EndEpisodes.
const endBatch = 500

// EndEpisodes closes the open episodes of rule whose ticket is not in
// matching and returns how many it closed. Call it only after a complete
// poll of the rule's query. It reads the rule's open episodes (not the
// matching ids) into the statement, closing the difference in batches, so
// its cost grows with the episodes it closes, not with len(matching).
func (s *Store) EndEpisodes(ctx context.Context, rule string, matching []int64, now time.Time) (int, error) {
	op := fmt.Sprintf("end episodes of rule %q", rule)
	now = dbTime(now)
	keep := make(map[int64]struct{}, len(matching))
	for _, id := range matching {
		keep[id] = struct{}{}
	}
	closed := 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		closed = 0
		// A firing that has begun keeps its episode open until it
		// finishes, whatever its first actions did to the ticket: the rest
		// must happen, once, in the same episode.
		open, err := column[int64](ctx, tx, `SELECT e.ticket_id FROM ledger_episodes e
			WHERE e.rule = $1 AND e.is_open AND NOT EXISTS (
				SELECT 1 FROM ledger_firings f WHERE f.id = e.firing_id AND `+begun+`)`, rule)
		if err != nil {
			return fmt.Errorf("read open episodes: %w", err)
		}
		var end []int64
		for _, id := range open {
			if _, ok := keep[id]; !ok {
				end = append(end, id)
			}
		}
		for len(end) > 0 {
			batch := end[:min(len(end), endBatch)]
			end = end[len(batch):]
			in, args := inList(batch, rule, now)
			n, err := affected(ctx, tx, `UPDATE ledger_episodes SET is_open = FALSE, ended_at = $2
				WHERE rule = $1 AND is_open AND ticket_id IN (`+in+`)`, args...)
			if err != nil {
				return fmt.Errorf("close episodes: %w", err)
			}
			closed += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, s.wrap(op, err)
	}
	return closed, nil
}

// inList returns the placeholders of ids for an IN (...) list that
// follows the statement's first parameters, and the statement's arguments:
// first, then ids.
func inList(ids []int64, first ...any) (string, []any) {
	args := make([]any, 0, len(first)+len(ids))
	args = append(args, first...)
	var in strings.Builder
	for i, id := range ids {
		if i > 0 {
			in.WriteByte(',')
		}
		fmt.Fprintf(&in, "$%d", len(first)+i+1)
		args = append(args, id)
	}
	return in.String(), args
}

// begun is the SQL condition on a firing f that it has begun: pending,
// and either an action of it is recorded done, or its latest attempt was
// not given up by Release (a worker that died or lost an answer may have
// acted). A firing released before anything was done has not begun.
const begun = `f.state = 'pending' AND (NOT f.released OR EXISTS (SELECT 1 FROM ledger_actions a WHERE a.firing_id = f.id))`

// BegunFirings returns, by rule, the tickets whose current firing has
// begun (see begun): firings that must finish although the ticket may no
// longer match (their first actions may have moved it), each action once.
func (s *Store) BegunFirings(ctx context.Context) (map[string][]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT e.rule, e.ticket_id FROM ledger_episodes e
		JOIN ledger_firings f ON f.id = e.firing_id
		WHERE `+begun+`
		ORDER BY e.rule, e.ticket_id`)
	if err != nil {
		return nil, s.wrap("read begun firings", err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var rule string
		var id int64
		if err := rows.Scan(&rule, &id); err != nil {
			return nil, s.wrap("read begun firings", err)
		}
		out[rule] = append(out[rule], id)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("read begun firings", err)
	}
	return out, nil
}

// OpenEpisodes returns the tickets, in ascending order, on which rule has an
// open episode. The scheduler reads them to find the episodes a poll would
// end, so that it can confirm each before EndEpisodes closes it.
func (s *Store) OpenEpisodes(ctx context.Context, rule string) ([]int64, error) {
	ids, err := column[int64](ctx, s.db, `SELECT ticket_id FROM ledger_episodes WHERE rule = $1 AND is_open ORDER BY ticket_id`, rule)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("read open episodes of rule %q", rule), err)
	}
	return ids, nil
}

// firingCols are the columns scanFiring reads, from ledger_episodes e
// joined with its current firing f.
const firingCols = `e.ticket_id, e.episode, e.is_open, e.started_at, e.ended_at, e.last_fired_at,
	f.id, f.seq, f.state, f.claimed_at, f.lease_until, f.fired_at, f.attempts, f.last_error,
	COALESCE(f.epoch, 0), COALESCE(f.released, FALSE)`

// scanFiring reads one row of firingCols into fi (all but Done); false
// when the row says the rule never fired on the ticket. A pending claim of
// an older epoch than ours shows no lease (staleLease).
func scanFiring(row interface{ Scan(...any) error }, fi *rules.FiringRecord, ours int64) (bool, error) {
	var (
		started, ended, lastFired, claimed, leaseUntil, firedAt sql.NullTime
		firingID, seq, attempts                                 sql.NullInt64
		state, lastErr                                          sql.NullString
		epoch                                                   int64
		released                                                bool
	)
	if err := row.Scan(&fi.Key.TicketID, &fi.Episode, &fi.Open, &started, &ended, &lastFired,
		&firingID, &seq, &state, &claimed, &leaseUntil, &firedAt, &attempts, &lastErr, &epoch, &released); err != nil {
		return false, err
	}
	staleLease(&leaseUntil, rules.FiringStatus(state.String) == rules.FiringPending, released, epoch, ours)
	if fi.Episode == 0 && !firingID.Valid {
		return false, nil
	}
	fi.EpisodeStarted, fi.EpisodeEnded, fi.LastFiredAt = utc(started), utc(ended), utc(lastFired)
	fi.FiringID, fi.Seq, fi.Attempts = firingID.Int64, seq.Int64, int(attempts.Int64)
	fi.State, fi.LastError = rules.FiringStatus(state.String), lastErr.String
	fi.ClaimedAt, fi.LeaseUntil, fi.FiredAt = utc(claimed), utc(leaseUntil), utc(firedAt)
	return true, nil
}

// FiringState reports the ledger's record of key; false when the rule never
// claimed the ticket.
func (s *Store) FiringState(ctx context.Context, key rules.FiringKey) (rules.FiringRecord, bool, error) {
	fi := rules.FiringRecord{Key: key}
	found := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		found, err = scanFiring(tx.QueryRowContext(ctx, `SELECT `+firingCols+`
			FROM ledger_episodes e LEFT JOIN ledger_firings f ON f.id = e.firing_id
			WHERE e.rule = $1 AND e.ticket_id = $2`, key.Rule, key.TicketID), &fi, s.readEpoch())
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil || !found {
			return err
		}
		fi.Done, err = doneActions(ctx, tx, fi.FiringID)
		return err
	})
	if err != nil {
		return rules.FiringRecord{}, false, s.wrap(fmt.Sprintf("read firing state of rule %q ticket %d", key.Rule, key.TicketID), err)
	}
	return fi, found, nil
}

// FiringStates is FiringState for many tickets of one rule, without Done,
// in one read-only statement per endBatch tickets (no write lock): the
// scheduler's pre-check of a cycle's decisions reads a rule's states at
// once instead of one transaction per decision. Tickets the rule never
// fired on are absent from the map.
func (s *Store) FiringStates(ctx context.Context, rule string, ticketIDs []int64) (map[int64]rules.FiringRecord, error) {
	out := make(map[int64]rules.FiringRecord, len(ticketIDs))
	for len(ticketIDs) > 0 {
		batch := ticketIDs[:min(len(ticketIDs), endBatch)]
		ticketIDs = ticketIDs[len(batch):]
		in, args := inList(batch, rule)
		if err := s.scanFirings(ctx, out, rule, `SELECT `+firingCols+`
			FROM ledger_episodes e LEFT JOIN ledger_firings f ON f.id = e.firing_id
			WHERE e.rule = $1 AND e.ticket_id IN (`+in+`)`, args); err != nil {
			return nil, s.wrap(fmt.Sprintf("read firing states of rule %q", rule), err)
		}
	}
	return out, nil
}

func (s *Store) scanFirings(ctx context.Context, out map[int64]rules.FiringRecord, rule, query string, args []any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		fi := rules.FiringRecord{Key: rules.FiringKey{Rule: rule}}
		found, err := scanFiring(rows, &fi, s.readEpoch())
		if err != nil {
			return err
		}
		if found {
			out[fi.Key.TicketID] = fi
		}
	}
	return rows.Err()
}

func utc(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// PruneFirings deletes the history the ledger no longer needs: firings that
// are no longer the current one of their (rule, ticket) (earlier OnceEvery
// repeats, firings of earlier episodes) and that finished, or were last
// claimed, before before. Current firings and episode rows are kept for
// ever, which is what OnceTicket and the explanations rely on.
func (s *Store) PruneFirings(ctx context.Context, before time.Time) (int, error) {
	before = dbTime(before)
	n, err := affected(ctx, s.db, `DELETE FROM ledger_firings
		WHERE (fired_at < $1 OR (state = 'pending' AND claimed_at < $1))
		AND NOT EXISTS (SELECT 1 FROM ledger_episodes e WHERE e.firing_id = ledger_firings.id)`, before)
	return int(n), s.wrap("prune firings", err)
}
