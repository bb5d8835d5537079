package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrations holds one directory per dialect; files are named
// NNNN_description.sql and applied in order of NNNN.
//
//go:embed migrations
var migrations embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(engine Engine) ([]migration, error) {
	dir := path.Join("migrations", string(engine))
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration file %s/%s: want NNNN_name.sql", dir, e.Name())
		}
		b, err := fs.ReadFile(migrations, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].name, out[i].name, out[i].version)
		}
	}
	return out, nil
}

// migrate applies the missing migrations in one transaction. Two processes
// opening the same database at once are serialised: on PostgreSQL by a
// transaction-scoped advisory lock on the schema, on SQLite by the immediate
// transaction (the database's write lock, taken at BEGIN).
//
// SQLite answers SQLITE_BUSY without waiting out the busy timeout when two
// connections race to switch a new file to WAL (the switch needs the
// exclusive lock, and a waiter holding a shared lock would deadlock), so on
// SQLite a busy migration is retried until the busy timeout has passed.
func (s *Store) migrate(ctx context.Context, busyTimeout time.Duration) error {
	ms, err := loadMigrations(s.engine)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := s.migrateOnce(ctx, ms)
		if s.engine != SQLite || !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		// Jitter, so that racing processes do not retry in lockstep.
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var e interface{ Code() int }
	return errors.As(err, &e) && e.Code()&0xff == 5
}

func (s *Store) migrateOnce(ctx context.Context, ms []migration) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if s.engine == Postgres {
			var schema sql.NullString
			if err := tx.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
				return fmt.Errorf("read current schema: %w", err)
			}
			if !schema.Valid {
				return fmt.Errorf("no schema of search_path exists (create it, or fix WithSchema / search_path)")
			}
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('deskbot.store.migrate.' || current_schema()))`); err != nil {
				return fmt.Errorf("lock schema for migration: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS deskbot_schema_migrations (
			version    INTEGER   PRIMARY KEY,
			name       TEXT      NOT NULL,
			applied_at TIMESTAMP NOT NULL
		)`); err != nil {
			return fmt.Errorf("create migrations table: %w", err)
		}
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM deskbot_schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		latest := ms[len(ms)-1].version
		if current > latest {
			return fmt.Errorf("database schema version %d is newer than this deskbot knows (%d); upgrade deskbot", current, latest)
		}
		for _, m := range ms {
			if m.version <= current {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO deskbot_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, dbTime(s.now())); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
		}
		return nil
	})
}

// SchemaVersion reports the schema version of the database, for diagnostics.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM deskbot_schema_migrations`).Scan(&v)
	return v, s.wrap("read schema version", err)
}

// inTx runs fn in a transaction (BEGIN IMMEDIATE on SQLite) and commits it.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.tx(ctx, nil, fn)
}

// tx runs fn in a transaction with opts and commits it; an error of fn
// rolls it back.
func (s *Store) tx(ctx context.Context, opts *sql.TxOptions, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// affected runs a statement and returns the number of rows it affected.
func affected(ctx context.Context, e execer, query string, args ...any) (int64, error) {
	res, err := e.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// dbTime is how every time is stored: UTC, microseconds (PostgreSQL's
// precision, so both engines give back exactly what they were given).
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
