package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deskbot/deskbot/internal/pgtest"
)

// Deskbots whose states live in different schemas of one database must not
// share the scheduler lock (or only one of them would ever poll); replicas
// of one state must. (Was cmd/deskbot TestSchedulerLockKeyPerSchema.)
func TestLockKeyPerSchema(t *testing.T) {
	key := func(dsn string) int64 {
		t.Helper()
		pc, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return lockKey(pc)
	}
	const base = "postgres://u:p@db:5432/desk?sslmode=disable"
	plain := key(base)
	// fnv-64a of "deskbot-scheduler", the key of every deskbot so far.
	if plain != -2682673602782000875 {
		t.Fatal("a DSN without search_path changed its lock key: replicas of an older deskbot would not exclude it")
	}
	a := key(base + "&search_path=team_a")
	b := key(base + "&search_path=team_b")
	if a == b || a == plain || b == plain {
		t.Fatalf("keys not distinct: plain %d, team_a %d, team_b %d", plain, a, b)
	}
	if got := key("postgres://other:q@db2:5433/desk?search_path=team_a"); got != a {
		t.Fatal("the same schema through another user or host got another key")
	}
	if got := key(base + "&options=-c%20search_path%3Dteam_a"); got != a {
		t.Fatal("options=-c search_path=team_a and search_path=team_a got different keys")
	}
}

// A second process on one SQLite file is refused the scheduler, with an
// error naming the lock file; once the first lets go, it may. (Was
// scheduler TestLockFileRefusesASecondHolder.)
func TestLeadershipSQLiteFileRefusesASecondHolder(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	a, b := openTest(t, db), openTest(t, "sqlite:"+db)
	l, err := a.Leadership(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.IsLeader(t.Context()); err != nil || !l.Leader() {
		t.Errorf("SQLite leader: IsLeader = %v, Leader = %v; want nil, true", err, l.Leader())
	}
	_, err = b.Leadership(nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "state.db.lock") ||
		!strings.Contains(err.Error(), "another deskbot (pid ") {
		t.Fatalf("second lock: %v, want ErrLocked naming the lock file and the holder's pid", err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	l2, err := b.Leadership(nil)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Close(t.Context())
}

// An in-memory SQLite store is private to its process, which leads.
func TestLeadershipInMemory(t *testing.T) {
	l, err := openTest(t, ":memory:").Leadership(nil)
	if err != nil || l.IsLeader(t.Context()) != nil || !l.Leader() || l.Close(t.Context()) != nil {
		t.Fatalf("in-memory leadership: %v; want a leader without a lock", err)
	}
}

// Two replicas on one PostgreSQL schema: one leads; when its connection is
// killed on the server, the other takes over and the old one follows.
func TestLeadershipPostgresFailover(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	ctx := t.Context()
	a, b := openTest(t, dsn, WithSchema(schema)), openTest(t, dsn, WithSchema(schema))
	if a.LockKey() != b.LockKey() || a.LockKey() == openTest(t, dsn).LockKey() {
		t.Fatalf("lock keys: replicas %d and %d, without the schema %d; want the replicas' equal and distinct from the other", a.LockKey(), b.LockKey(), openTest(t, dsn).LockKey())
	}
	la, err := a.Leadership(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { la.Close(ctx) })
	lb, err := b.Leadership(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close(ctx) })
	if err := la.IsLeader(ctx); err != nil || !la.Leader() {
		t.Fatalf("first replica: IsLeader = %v; want the leadership", err)
	}
	if err := lb.IsLeader(ctx); !errors.Is(err, ErrNotLeader) || lb.Leader() {
		t.Fatalf("second replica: IsLeader = %v; want ErrNotLeader", err)
	}
	pgtest.KillLockHolder(t, a.LockKey())
	if err := lb.IsLeader(ctx); err != nil || !lb.Leader() {
		t.Fatalf("second replica after the leader's connection died: IsLeader = %v; want the leadership", err)
	}
	if err := la.IsLeader(ctx); err == nil || la.Leader() {
		t.Errorf("old leader with its connection killed: IsLeader = %v, Leader = %v; want an error and false", err, la.Leader())
	}
	if err := la.IsLeader(ctx); !errors.Is(err, ErrNotLeader) {
		t.Errorf("old leader after the take-over: IsLeader = %v, want ErrNotLeader", err)
	}
	if err := lb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lb.IsLeader(ctx); !errors.Is(err, ErrNotLeader) {
		t.Errorf("IsLeader after Close = %v, want ErrNotLeader", err)
	}
}

// CheckStateFile says what is wrong with a SQLite file's place or a DSN's
// form, and nothing of PostgreSQL DSNs.
func TestCheckStateFile(t *testing.T) {
	dir := t.TempDir()
	for dsn, want := range map[string]string{
		filepath.Join(dir, "ok.db"): "",
		"postgres://u:p@h/db":       "",
		":memory:":                  "",
		"mysql://x/y":               `unsupported scheme "mysql"`,
		filepath.Join(dir, "ok.db") + "?_txlock=deferred": "deskbot needs _txlock=immediate",
		dir: "is a directory",
		"sqlite:" + filepath.Join(dir, "no", "x.db"): "does not exist",
	} {
		err := CheckStateFile(dsn)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckStateFile(%q) = %v, want %q", dsn, err, want)
		}
	}
}

// openTest opens a store that t closes.
func openTest(t *testing.T, dsn string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(t.Context(), dsn, append([]Option{WithBusyTimeout(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
