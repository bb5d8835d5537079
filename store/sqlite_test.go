package store_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/crashtest"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

var sqliteOpen = storetest.PerTest(func(t *testing.T) (string, []store.Option) {
	return filepath.Join(t.TempDir(), "state.db"), nil
})

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, sqliteOpen)
}

// The DSN forms DESKBOT_STATE accepts for SQLite all reach the same file.
func TestSQLiteDSNForms(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x #1.db")
	key := rules.FiringKey{Rule: "r", TicketID: 1}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, dsn := range []string{path, "sqlite:" + path, "sqlite://" + path, "file:" + filepath.Join(dir, "x%20%231.db") + "?_pragma=busy_timeout(2000)"} {
		s, err := store.Open(t.Context(), dsn)
		if err != nil {
			t.Fatalf("Open(%q): %v", dsn, err)
		}
		f, err := s.Claim(t.Context(), key, rules.Once{}, t0, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if f.Won != (i == 0) {
			t.Errorf("Open(%q): claim won = %v; want the file of the first form to be reused", dsn, f.Won)
		}
		if s.Engine() != store.SQLite {
			t.Errorf("Engine = %q", s.Engine())
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Error(err)
	}
}

func TestSQLiteMemory(t *testing.T) {
	s, err := store.Open(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now()
	key := rules.FiringKey{Rule: "r", TicketID: 1}
	if f, err := s.Claim(t.Context(), key, rules.Once{}, t0, time.Hour); err != nil || !f.Won {
		t.Fatalf("Claim = %+v, %v", f, err)
	}
	if f, err := s.Claim(t.Context(), key, rules.Once{}, t0, time.Hour); err != nil || f.Won {
		t.Fatalf("second Claim = %+v, %v; the in-memory database must live as long as the store", f, err)
	}
}

func TestSQLiteOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ dsn, want string }{
		{filepath.Join(dir, "missing", "dir", "state.db"), "sqlite"},
		{filepath.Join(dir, "a.db") + "?_txlock=deferred", "_txlock=immediate"},
		{"file:" + filepath.Join(dir, "b.db") + "?_time_format=datetime", "_time_format=sqlite"},
		{"sqlite:", "no file"},
	} {
		s, err := store.Open(t.Context(), tc.dsn)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded; want an error", tc.dsn)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "sqlite") {
			t.Errorf("Open(%q) = %v; want it to mention sqlite and %q", tc.dsn, err, tc.want)
		}
	}
	if _, err := store.Open(t.Context(), filepath.Join(dir, "c.db"), store.WithSchema("x")); err == nil {
		t.Error("WithSchema accepted for SQLite")
	}
}

// crashEnv makes the test binary, re-executed as a child, claim a firing,
// record action 0 and kill itself with SIGKILL, like a deskbot process
// killed between the desk's write and the ledger's update.
const crashEnv = "DESKBOT_STORE_TEST_CRASH_DB"

var crashT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const crashLease = 5 * time.Minute

func TestSQLiteKilledMidFiring(t *testing.T) {
	key := rules.FiringKey{Rule: "page-urgent", TicketID: 42}
	if path := os.Getenv(crashEnv); path != "" {
		s, err := store.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.Claim(t.Context(), key, rules.Once{}, crashT0, crashLease)
		if err != nil || !f.Won {
			t.Fatalf("child claim = %+v, %v", f, err)
		}
		if err := s.ActionDone(t.Context(), f.ID, 0); err != nil {
			t.Fatal(err)
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never reached
	}

	path := filepath.Join(t.TempDir(), "state.db")
	crashtest.KilledChild(t, "TestSQLiteKilledMidFiring", crashEnv+"="+path)

	s, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f, err := s.Claim(t.Context(), key, rules.Once{}, crashT0.Add(crashLease-time.Second), crashLease); err != nil || f.Won {
		t.Fatalf("claim before the lease ran out = %+v, %v; want not won", f, err)
	}
	f, err := s.Claim(t.Context(), key, rules.Once{}, crashT0.Add(crashLease), crashLease)
	if err != nil || !f.Won || !f.Resumed || !slices.Equal(f.Done, []int{0}) || f.Episode != 1 || f.Seq != 1 {
		t.Fatalf("claim after the lease = %+v, %v; want Won, Resumed, Done [0]", f, err)
	}
}

// Several processes starting at once on a new file migrate it once.
func TestSQLiteConcurrentMigrations(t *testing.T) {
	openConcurrently(t, 6, filepath.Join(t.TempDir(), "state.db"))
}

// openConcurrently opens n stores on dsn at once, as n processes starting
// together would, and closes them: each must migrate or find migrated.
func openConcurrently(t *testing.T, n int, dsn string, opts ...store.Option) {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := store.Open(t.Context(), dsn, opts...)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A database migrated by a newer deskbot is refused, not silently used.
func TestSQLiteNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO deskbot_schema_migrations (version, name, applied_at) VALUES (999, 'future.sql', '2030-01-01 00:00:00+00:00')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = store.Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer schema succeeded")
	}
	if !strings.Contains(err.Error(), "999 is newer") || !strings.HasPrefix(err.Error(), "sqlite: ") {
		t.Errorf("Open = %v; want it to say the schema version 999 is newer, naming sqlite", err)
	}
}
