package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotLeader is returned (wrapped) by (*Leadership).IsLeader when another
// replica holds the scheduler leadership on a PostgreSQL state.
var ErrNotLeader = errors.New("not the leader")

// ErrLocked is returned (wrapped) by (*Store).Leadership when another
// process already runs the scheduler on the same SQLite file.
var ErrLocked = errors.New("locked by another process")

// schedulerLockName is the advisory lock's name, from which the key of every
// deskbot that shares a PostgreSQL database derives.
const schedulerLockName = "deskbot-scheduler"

// Leadership decides whether this process runs the rules scheduler on the
// store's state, so that of several deskbots sharing one state exactly one
// polls. It is gocron's Elector (IsLeader), and says what it last decided
// (Leader). Close gives the leadership up.
//
// How depends on the engine:
//   - a SQLite file: an exclusive lock on the file PATH.lock, taken when the
//     Leadership is made and held until Close; a second process is refused
//     then (one scheduler per SQLite file), so IsLeader always says yes;
//   - SQLite in memory: private to the process, which always leads;
//   - PostgreSQL: a session advisory lock (pg_try_advisory_lock) held on one
//     dedicated connection, not a pool. The replica whose session holds it
//     leads; when its connection ends (the process dies, the network drops)
//     PostgreSQL releases the lock and the next replica's IsLeader takes
//     it. Advisory locks are re-entrant, so a leader never locks again: it
//     asks PostgreSQL whether its session still holds the lock (a pooler in
//     transaction mode, or a connection recycled under it, loses a session
//     lock silently) and whether the epoch is still its own; either failing
//     makes it a follower.
//
// Leadership carries an epoch (a fencing token): each time a process gains
// it, the store's epoch grows by one and is this process's until it loses
// the leadership. The store's Claim records it on every firing, and Claim
// and ActionDone write only while the store's epoch is still this
// process's, so a leader that lost the leadership unnoticed learns it at
// its next claim or recorded action and acts no more; and a new leader takes over the pending claims of older epochs at
// once, without waiting out the dead leader's leases.
type Leadership struct {
	lock   *fileLock  // a SQLite file
	pg     *pgElector // PostgreSQL
	logger *slog.Logger

	// epoch is the epoch this process leads in; 0 while it does not lead
	// (not yet won, lost, given up).
	epoch atomic.Int64
}

// Leadership takes this process's part in electing the scheduler on the
// store's state (see the type). On a SQLite file another process holding
// the lock gives an error wrapping ErrLocked that names its pid; on SQLite
// the process leads from here on, in a new epoch. logger hears of
// leadership won and lost (nil: discarded). The store's claims are fenced
// on this Leadership from then on.
func (s *Store) Leadership(ctx context.Context, logger *slog.Logger) (*Leadership, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Leadership{logger: logger}
	switch {
	case s.engine == Postgres:
		l.pg = &pgElector{cfg: s.pgConfig, key: s.lockKey, logger: logger, scrub: s.scrub, epoch: &l.epoch, now: s.now, holder: s.replicaName()}
		s.lead.Store(l)
		return l, nil
	case s.file != "":
		lock, err := lockFile(s.file)
		if err != nil {
			return nil, err
		}
		l.lock = lock
	}
	var epoch int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, bumpEpoch, dbTime(s.now()), s.replicaName()).Scan(&epoch)
	})
	if err != nil {
		_ = l.lock.unlock()
		return nil, s.wrap("begin a leadership epoch", err)
	}
	l.epoch.Store(epoch)
	s.lead.Store(l)
	logger.Debug("leads the scheduler", slog.Int64("epoch", epoch))
	return l, nil
}

// bumpEpoch starts a new leadership epoch, held by replica $2, and
// returns it.
const bumpEpoch = `UPDATE leader_epoch SET epoch = epoch + 1, since = $1, holder = $2 WHERE id = 1 RETURNING epoch`

// IsLeader returns nil when this process leads, an error wrapping
// ErrNotLeader when another replica does (or this one lost the leadership
// to a newer epoch), or the connection error. gocron asks it before every
// run.
func (l *Leadership) IsLeader(ctx context.Context) error {
	if l.pg != nil {
		return l.pg.IsLeader(ctx)
	}
	if l.epoch.Load() == 0 {
		return fmt.Errorf("leader election: this process gave the leadership up or lost it: %w", ErrNotLeader)
	}
	return nil // decided when the Leadership was made
}

// Leader reports whether this process led at the last IsLeader.
func (l *Leadership) Leader() bool {
	if l.pg != nil {
		return l.pg.Leader()
	}
	return l.epoch.Load() != 0
}

// Epoch is the leadership epoch this process leads in, 0 while it does not
// lead.
func (l *Leadership) Epoch() int64 { return l.epoch.Load() }

// fencedOut makes this process a follower because the store's epoch moved
// on from ours to now: another process gained the leadership.
func (l *Leadership) fencedOut(ours, now int64) {
	if !l.epoch.CompareAndSwap(ours, 0) {
		return // already lost, and said so
	}
	l.logger.Warn("lost the scheduler leadership: another process leads in a newer epoch; not acting",
		slog.Int64("epoch", ours), slog.Int64("current_epoch", now))
	if l.pg != nil {
		l.pg.fencedOut()
	}
}

// Close gives the leadership up (releasing the file lock, or closing the
// session that holds the advisory lock); IsLeader refuses from then on.
func (l *Leadership) Close(ctx context.Context) error {
	l.epoch.Store(0)
	if l.pg != nil {
		return l.pg.Close(ctx)
	}
	return l.lock.unlock()
}

// claimEpoch is the epoch the store's claims are made in: 0 when no
// Leadership was taken on the store (tests, tools), an error wrapping
// ErrNotLeader when one was and this process does not lead now.
func (s *Store) claimEpoch() (int64, error) {
	l := s.lead.Load()
	if l == nil {
		return 0, nil
	}
	if e := l.epoch.Load(); e != 0 {
		return e, nil
	}
	return 0, fmt.Errorf("this process does not lead the scheduler (not won yet, lost or given up); not claiming: %w", ErrNotLeader)
}

// readEpoch is the epoch against which the store judges the claims it
// reads: a pending claim of an older epoch holds no lease (0: none taken).
func (s *Store) readEpoch() int64 {
	if l := s.lead.Load(); l != nil {
		return l.epoch.Load()
	}
	return 0
}

// fence checks, inside a claim's (or ActionDone's) transaction, that the
// store's epoch is still ours (ours > 0); on PostgreSQL it holds the epoch
// row FOR SHARE until the write commits, so that a new leader's epoch
// follows every write of the old one.
func (s *Store) fence(ctx context.Context, tx *sql.Tx, ours int64) error {
	if ours == 0 {
		return nil
	}
	q := `SELECT epoch FROM leader_epoch WHERE id = 1`
	if s.engine == Postgres {
		q += ` FOR SHARE`
	}
	var now int64
	if err := tx.QueryRowContext(ctx, q).Scan(&now); err != nil {
		return fmt.Errorf("read the leadership epoch: %w", err)
	}
	if now != ours {
		if l := s.lead.Load(); l != nil {
			l.fencedOut(ours, now)
		}
		return fmt.Errorf("leadership epoch %d superseded by %d: %w", ours, now, ErrNotLeader)
	}
	return nil
}

// LockKey is the advisory lock key of the scheduler leadership on this
// store's PostgreSQL database (0 on SQLite). Advisory locks are per
// database, so deskbots that keep separate states in separate schemas of one
// database (a search_path in the DSN, or WithSchema) get separate keys and
// each polls; without a schema the key is the historical one, so a rolling
// upgrade keeps one leader.
func (s *Store) LockKey() int64 { return s.lockKey }

// lockKey derives the advisory lock key from the PostgreSQL connection
// settings: the search_path, whether set as a parameter or libpq style
// (options=-c search_path=x).
func lockKey(pc *pgx.ConnConfig) int64 {
	sp := pc.RuntimeParams["search_path"]
	if sp == "" {
		if _, rest, ok := strings.Cut(pc.RuntimeParams["options"], "search_path="); ok {
			sp, _, _ = strings.Cut(rest, " ")
		}
	}
	sp = strings.Join(strings.Fields(strings.ReplaceAll(sp, ",", " ")), ",")
	if sp == "" {
		return hashKey(schedulerLockName)
	}
	return hashKey(schedulerLockName + "/" + sp)
}

// hashKey turns a lock name into an advisory lock key.
func hashKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// pgElector is the PostgreSQL Leadership. It connects lazily, on the first
// IsLeader.
type pgElector struct {
	cfg    *pgx.ConnConfig
	key    int64
	logger *slog.Logger
	scrub  func(error) error // removes the DSN's secrets
	epoch  *atomic.Int64     // the Leadership's
	now    func() time.Time
	holder string // this replica's name, recorded with its epochs

	mu     sync.Mutex
	conn   *pgx.Conn
	leader bool
	closed bool
}

// stillLeads asks, on the lock's connection, whether this session still
// holds the advisory lock (a bigint key is classid, the high half, and
// objid, the low half, with objsubid 1) and the store's epoch.
const stillLeads = `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND pid = pg_backend_pid() AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1),
	(SELECT epoch FROM leader_epoch WHERE id = 1)`

func (e *pgElector) IsLeader(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("leader election: elector closed: %w", ErrNotLeader)
	}
	if e.conn == nil || e.conn.IsClosed() {
		if e.leader {
			e.lose("connection closed")
		}
		e.conn = nil
		c, err := pgx.ConnectConfig(ctx, e.cfg)
		if err != nil {
			return fmt.Errorf("leader election: connect: %w", e.scrub(err))
		}
		e.conn = c
	}
	if e.leader {
		var held bool
		var epoch int64
		err := e.conn.QueryRow(ctx, stillLeads, int64(uint64(e.key)>>32), int64(uint32(e.key))).Scan(&held, &epoch)
		switch {
		case err != nil:
			e.drop(ctx)
			e.lose("the lock's connection failed", slog.Any("error", e.scrub(err)))
			return fmt.Errorf("leader election: check the lock: %w", e.scrub(err))
		case !held:
			// The session is not the one that took the lock: a pooler
			// or a reconnect swapped it. Dropping it lets the next
			// IsLeader compete again from a fresh session.
			e.drop(ctx)
			e.lose("the session no longer holds the advisory lock (a connection pooler or a recycled connection dropped it)")
			return fmt.Errorf("leader election: lock %d no longer held: %w", e.key, ErrNotLeader)
		case epoch != e.epoch.Load():
			e.drop(ctx)
			e.lose("another process leads in a newer epoch", slog.Int64("current_epoch", epoch))
			return fmt.Errorf("leader election: epoch superseded by %d: %w", epoch, ErrNotLeader)
		}
		return nil
	}
	var ok bool
	if err := e.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, e.key).Scan(&ok); err != nil {
		e.drop(ctx)
		return fmt.Errorf("leader election: try lock: %w", e.scrub(err))
	}
	if !ok {
		return fmt.Errorf("leader election: lock %d held by another replica: %w", e.key, ErrNotLeader)
	}
	var epoch int64
	if err := e.conn.QueryRow(ctx, bumpEpoch, dbTime(e.now()), e.holder).Scan(&epoch); err != nil {
		e.drop(ctx) // releases the lock: no leader without an epoch
		return fmt.Errorf("leader election: begin an epoch: %w", e.scrub(err))
	}
	e.leader = true
	e.epoch.Store(epoch)
	e.logger.Info("became the scheduler leader", slog.Int64("lock", e.key), slog.Int64("epoch", epoch))
	return nil
}

// lose makes this replica a follower and says why.
func (e *pgElector) lose(why string, attrs ...any) {
	e.leader = false
	if old := e.epoch.Swap(0); old != 0 {
		e.logger.Warn("lost the scheduler leadership: "+why+"; not acting", append([]any{slog.Int64("epoch", old)}, attrs...)...)
	}
}

// fencedOut drops the session of a leader whose claim found a newer
// epoch: it no longer holds the lock, whatever it believed.
func (e *pgElector) fencedOut() {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.drop(ctx)
}

func (e *pgElector) drop(ctx context.Context) {
	if e.conn != nil {
		_ = e.conn.Close(ctx)
	}
	e.conn, e.leader = nil, false
}

func (e *pgElector) Leader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

func (e *pgElector) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	e.epoch.Store(0)
	if e.conn == nil {
		return nil
	}
	err := e.conn.Close(ctx)
	e.conn, e.leader = nil, false
	return err
}

// fileLock is an exclusive lock on a file, held until unlock or the end of
// the process.
type fileLock struct {
	f *os.File
}

// lockFile makes this process the only scheduler on a SQLite state file:
// it takes an exclusive, non-blocking flock on dbPath+".lock" (creating it)
// and writes its pid there. A second process on the same file gets an
// error wrapping ErrLocked that names the holder's pid. The kernel drops
// the lock when the process dies, so a crash never leaves it stale.
func lockFile(dbPath string) (*fileLock, error) {
	path := dbPath + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock scheduler state %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock scheduler state %s: another deskbot%s already runs the scheduler on this database; with SQLite only one process may, use PostgreSQL for several replicas: %w", path, holder, ErrLocked)
		}
		return nil, fmt.Errorf("lock scheduler state %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &fileLock{f: f}, nil
}

// unlock releases the lock; a nil or released lock is a no-op.
func (l *fileLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
