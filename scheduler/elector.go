package scheduler

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// PGElector is a gocron Elector backed by a PostgreSQL session advisory
// lock (pg_try_advisory_lock) held on ONE dedicated connection, not a pool:
// the replica whose session holds the lock is the leader; when its
// connection ends (the process dies, the network drops), PostgreSQL
// releases the lock and the next replica's IsLeader takes it. Because
// advisory locks are re-entrant, a leader never locks again; it only pings
// its connection, and a failed ping makes it a follower.
type PGElector struct {
	dsn    string
	key    int64
	logger *slog.Logger

	mu     sync.Mutex
	conn   *pgx.Conn
	leader bool
	closed bool
}

// LockKey derives an advisory lock key from a name (e.g. "deskbot-scheduler"
// plus the schema), so that deskbots sharing a server but not a state do not
// exclude each other.
func LockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// NewPGElector returns an elector for the PostgreSQL at dsn using the
// advisory lock key. It connects lazily, on the first IsLeader.
func NewPGElector(dsn string, key int64, logger *slog.Logger) *PGElector {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &PGElector{dsn: dsn, key: key, logger: logger}
}

// IsLeader returns nil when this replica leads, an error wrapping
// ErrNotLeader when another one does, or the connection error.
func (e *PGElector) IsLeader(ctx context.Context) error {
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
		c, err := pgx.Connect(ctx, e.dsn)
		if err != nil {
			return fmt.Errorf("leader election: connect: %w", e.redact(err))
		}
		e.conn = c
	}
	if e.leader {
		if err := e.conn.Ping(ctx); err != nil {
			e.drop(ctx)
			e.logger.Warn("lost the scheduler leadership: ping failed", slog.Any("error", e.redact(err)))
			return fmt.Errorf("leader election: ping: %w", e.redact(err))
		}
		return nil
	}
	var ok bool
	if err := e.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, e.key).Scan(&ok); err != nil {
		e.drop(ctx)
		return fmt.Errorf("leader election: try lock: %w", e.redact(err))
	}
	if !ok {
		return fmt.Errorf("leader election: lock %d held by another replica: %w", e.key, ErrNotLeader)
	}
	e.leader = true
	e.logger.Info("became the scheduler leader", slog.Int64("lock", e.key))
	return nil
}

func (e *PGElector) drop(ctx context.Context) {
	if e.conn != nil {
		_ = e.conn.Close(ctx)
	}
	e.conn, e.leader = nil, false
}

// Leader reports whether this replica held the lock at the last IsLeader.
func (e *PGElector) Leader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

// Close gives the leadership up (closing the session releases the lock)
// and makes IsLeader refuse from then on.
func (e *PGElector) Close(ctx context.Context) error {
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

// redact makes sure an error never shows the DSN's password.
func (e *PGElector) redact(err error) error {
	u, perr := url.Parse(e.dsn)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "[REDACTED]"))
}
