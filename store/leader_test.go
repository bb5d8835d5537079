package store

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/rules"
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
	l, err := a.Leadership(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.IsLeader(t.Context()); err != nil || !l.Leader() {
		t.Errorf("SQLite leader: IsLeader = %v, Leader = %v; want nil, true", err, l.Leader())
	}
	_, err = b.Leadership(t.Context(), nil)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "state.db.lock") ||
		!strings.Contains(err.Error(), "another deskbot (pid ") {
		t.Fatalf("second lock: %v, want ErrLocked naming the lock file and the holder's pid", err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	l2, err := b.Leadership(t.Context(), nil)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Close(t.Context())
}

// An in-memory SQLite store is private to its process, which leads.
func TestLeadershipInMemory(t *testing.T) {
	l, err := openTest(t, ":memory:").Leadership(t.Context(), nil)
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
	la, err := a.Leadership(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { la.Close(ctx) })
	lb, err := b.Leadership(t.Context(), nil)
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

// A PostgreSQL session advisory lock is lost silently when a pooler
// (PgBouncer in transaction mode) or a connection recycle drops the session
// under the leader. Simulated here by releasing the lock on the leader's
// own connection, which stays open. Either the leader's next IsLeader
// notices (the session no longer holds the lock) and says so, or, when
// another replica took the leadership first, the old leader's next claim
// is refused by the newer epoch before it writes anything.
func TestLeadershipPostgresSilentLoss(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	ctx := t.Context()
	key := rules.FiringKey{Rule: "page", TicketID: 9}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	dropSession := func(l *Leadership) {
		t.Helper()
		l.pg.mu.Lock()
		defer l.pg.mu.Unlock()
		if _, err := l.pg.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("the leader notices at its next IsLeader", func(t *testing.T) {
		a := openTest(t, dsn, WithSchema(schema))
		var logs strings.Builder
		la, err := a.Leadership(ctx, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer la.Close(ctx)
		if err := la.IsLeader(ctx); err != nil {
			t.Fatal(err)
		}
		first := la.Epoch()
		if err := la.IsLeader(ctx); err != nil || la.Epoch() != first {
			t.Fatalf("IsLeader while holding the lock = %v, epoch %d; want the leadership kept in epoch %d", err, la.Epoch(), first)
		}
		dropSession(la)
		if err := la.IsLeader(ctx); !errors.Is(err, ErrNotLeader) || la.Leader() || la.Epoch() != 0 {
			t.Fatalf("IsLeader after the session lost its lock = %v (leader %v, epoch %d); want ErrNotLeader", err, la.Leader(), la.Epoch())
		}
		if !strings.Contains(logs.String(), "lost the scheduler leadership: the session no longer holds the advisory lock") {
			t.Errorf("the loss was not said; logs:\n%s", logs.String())
		}
		if _, err := a.Claim(ctx, key, rules.Once{}, t0, time.Minute); !errors.Is(err, ErrNotLeader) {
			t.Errorf("claim while not leading: %v, want ErrNotLeader", err)
		}
		// Nobody else leads: it competes again and leads in a new epoch.
		if err := la.IsLeader(ctx); err != nil || la.Epoch() != first+1 {
			t.Fatalf("IsLeader again = %v, epoch %d; want the leadership in epoch %d", err, la.Epoch(), first+1)
		}
		if f, err := a.Claim(ctx, key, rules.Once{}, t0, time.Minute); err != nil || !f.Won {
			t.Fatalf("claim in the new epoch: %+v, %v", f, err)
		}
	})

	// The old leader's first write after another replica took over (a
	// claim, or the record of an action of a firing it claimed before) is
	// refused by the newer epoch, and it says so and leads no more; the
	// new leader takes its firing over at once.
	for _, first := range []string{"claim", "action done"} {
		t.Run("another replica leads first: the old leader's "+first+" is fenced", func(t *testing.T) {
			a, b := openTest(t, dsn, WithSchema(schema)), openTest(t, dsn, WithSchema(schema))
			var logs strings.Builder
			la, err := a.Leadership(ctx, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer la.Close(ctx)
			lb, err := b.Leadership(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer lb.Close(ctx)
			if err := la.IsLeader(ctx); err != nil {
				t.Fatal(err)
			}
			held := rules.FiringKey{Rule: "fenced-" + strings.ReplaceAll(first, " ", "-"), TicketID: 1}
			f, err := a.Claim(ctx, held, rules.Once{}, t0, time.Hour)
			if err != nil || !f.Won {
				t.Fatalf("the leader's claim: %+v, %v", f, err)
			}
			dropSession(la)
			if err := lb.IsLeader(ctx); err != nil || lb.Epoch() <= la.Epoch() {
				t.Fatalf("the other replica: IsLeader = %v, epoch %d (old leader's %d); want the leadership in a newer epoch", err, lb.Epoch(), la.Epoch())
			}
			other := rules.FiringKey{Rule: held.Rule, TicketID: 2}
			switch first {
			case "claim":
				if _, err := a.Claim(ctx, other, rules.Once{}, t0, time.Minute); !errors.Is(err, ErrNotLeader) {
					t.Fatalf("the old leader's claim after another replica took over: %v, want ErrNotLeader", err)
				}
				if _, found, err := b.FiringState(ctx, other); err != nil || found {
					t.Errorf("the fenced claim left a record (found %v, %v)", found, err)
				}
			case "action done":
				if err := a.ActionDone(ctx, f.ID, 0); !errors.Is(err, ErrNotLeader) {
					t.Fatalf("the old leader's ActionDone after another replica took over: %v, want ErrNotLeader", err)
				}
			}
			if la.Leader() || !strings.Contains(logs.String(), "lost the scheduler leadership: another process leads in a newer epoch") {
				t.Errorf("old leader: Leader() = %v; logs:\n%s", la.Leader(), logs.String())
			}
			if err := la.IsLeader(ctx); !errors.Is(err, ErrNotLeader) {
				t.Errorf("old leader's IsLeader = %v, want ErrNotLeader while the other leads", err)
			}
			// Its firing's lease (an hour) binds the new leader no more.
			if g, err := b.Claim(ctx, held, rules.Once{}, t0.Add(time.Second), time.Minute); err != nil || !g.Won || !g.Resumed || len(g.Done) != 0 {
				t.Errorf("the new leader's take-over: %+v, %v; want it at once, nothing done", g, err)
			}
		})
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
