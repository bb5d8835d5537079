package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

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
//     pings its connection, and a failed ping makes it a follower.
type Leadership struct {
	lock *fileLock  // a SQLite file
	pg   *pgElector // PostgreSQL
}

// Leadership takes this process's part in electing the scheduler on the
// store's state (see the type). On a SQLite file another process holding
// the lock gives an error wrapping ErrLocked that names its pid. logger
// hears of leadership won and lost (nil: discarded).
func (s *Store) Leadership(logger *slog.Logger) (*Leadership, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case s.engine == Postgres:
		return &Leadership{pg: &pgElector{cfg: s.pgConfig, key: s.lockKey, logger: logger, scrub: s.scrub}}, nil
	case s.file != "":
		l, err := lockFile(s.file)
		if err != nil {
			return nil, err
		}
		return &Leadership{lock: l}, nil
	}
	return &Leadership{}, nil
}

// IsLeader returns nil when this process leads, an error wrapping
// ErrNotLeader when another replica does, or the connection error. gocron
// asks it before every run.
func (l *Leadership) IsLeader(ctx context.Context) error {
	if l.pg == nil {
		return nil // decided when the Leadership was made
	}
	return l.pg.IsLeader(ctx)
}

// Leader reports whether this process led at the last IsLeader.
func (l *Leadership) Leader() bool {
	if l.pg == nil {
		return true
	}
	return l.pg.Leader()
}

// Close gives the leadership up (releasing the file lock, or closing the
// session that holds the advisory lock); IsLeader refuses from then on.
func (l *Leadership) Close(ctx context.Context) error {
	if l.pg != nil {
		return l.pg.Close(ctx)
	}
	return l.lock.unlock()
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

	mu     sync.Mutex
	conn   *pgx.Conn
	leader bool
	closed bool
}

func (e *pgElector) IsLeader(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("leader election: elector closed: %w", ErrNotLeader)
	}
	if e.conn == nil || e.conn.IsClosed() {
		if e.leader {
			e.logger.Warn("lost the scheduler leadership: connection closed")
		}
		e.conn, e.leader = nil, false
		c, err := pgx.ConnectConfig(ctx, e.cfg)
		if err != nil {
			return fmt.Errorf("leader election: connect: %w", e.scrub(err))
		}
		e.conn = c
	}
	if e.leader {
		if err := e.conn.Ping(ctx); err != nil {
			e.drop(ctx)
			e.logger.Warn("lost the scheduler leadership: ping failed", slog.Any("error", e.scrub(err)))
			return fmt.Errorf("leader election: ping: %w", e.scrub(err))
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
	e.leader = true
	e.logger.Info("became the scheduler leader", slog.Int64("lock", e.key))
	return nil
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
