package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"
)

// WithReplica names this process when it leads the scheduler (default:
// "HOST (pid N)"): the name is stored with the leadership epoch, so that
// every replica's status page says which one leads.
func WithReplica(name string) Option { return func(c *config) { c.replica = name } }

// ReplicaName is the default replica name: the host name and the pid.
func ReplicaName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown host"
	}
	return fmt.Sprintf("%s (pid %d)", host, os.Getpid())
}

// replicaName is the name this store's process leads under.
func (s *Store) replicaName() string {
	if s.replica != "" {
		return s.replica
	}
	return ReplicaName()
}

// LeaderInfo is the scheduler leadership as the store records it.
type LeaderInfo struct {
	Epoch  int64     // 0: no process has led yet
	Since  time.Time // when the epoch began
	Holder string    // the replica that began it ("" before migration 0010)
}

// Leader reads which replica leads the scheduler on this state: the
// holder of the current epoch. The holder of a SQLite file's lock, or of
// PostgreSQL's advisory lock, begins an epoch when it gains the
// leadership, so the newest epoch names the leader (or the last one,
// when it died and no other replica has taken over yet).
func (s *Store) Leader(ctx context.Context) (LeaderInfo, error) {
	var (
		li     LeaderInfo
		since  sql.NullTime
		holder sql.NullString
	)
	err := s.db.QueryRowContext(ctx, `SELECT epoch, since, holder FROM leader_epoch WHERE id = 1`).Scan(&li.Epoch, &since, &holder)
	if err != nil {
		return LeaderInfo{}, s.wrap("read the leadership", err)
	}
	li.Since, li.Holder = utc(since), holder.String
	return li, nil
}
