package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the environment variable that holds the DSN of the test
// PostgreSQL server. Tests that need PostgreSQL skip without it.
const EnvVar = "DESKBOT_TEST_POSTGRES"

// ExampleDSN is a value of EnvVar that suits a local server (the one the
// skip message suggests).
const ExampleDSN = "postgres://postgres:postgres@127.0.0.1:5432/deskbot_test?sslmode=disable"

// DSN returns the test server's DSN from EnvVar, or skips t with a message
// that says how to run it. It creates nothing: for a database the test
// shares with others (a connection refused, a wrong password). Most tests
// want Schema or SchemaDSN instead.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		t.Skipf("%s is not set; set it to a PostgreSQL DSN, e.g. %s, to run the PostgreSQL tests", EnvVar, ExampleDSN)
	}
	return dsn
}

// Schema creates an empty schema of the test's own on the test server and
// drops it (CASCADE) when t ends, so that tests and packages running at the
// same time never see each other's tables. It returns the server's DSN
// (unchanged) and the schema's name, for store.WithSchema. It skips t like
// DSN.
func Schema(t testing.TB) (dsn, schema string) {
	t.Helper()
	dsn = DSN(t)
	schema = "pgtest_" + randomHex(6)
	if err := exec(dsn, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		if err := exec(dsn, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}

// SchemaDSN is Schema for code that takes a DSN alone (a deskbot process's
// DESKBOT_STATE): the returned DSN selects the new schema with its
// search_path parameter.
func SchemaDSN(t testing.TB) string {
	t.Helper()
	dsn, schema := Schema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// QueryRow runs one statement on the test server as an administrator
// would (on a connection of its own, outside the test's schema) and scans
// its first row into dest (none: the row is not read), failing t on an
// error. It is for tests that act on the server itself, such as ending
// another connection's backend.
func QueryRow(t testing.TB, sql string, args []any, dest ...any) {
	t.Helper()
	if err := withConn(DSN(t), func(ctx context.Context, c *pgx.Conn) error {
		if len(dest) == 0 {
			_, err := c.Exec(ctx, sql, args...)
			return err
		}
		return c.QueryRow(ctx, sql, args...).Scan(dest...)
	}); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// KillLockHolder ends, on the server, the backend that holds the session
// advisory lock key (pg_terminate_backend), as when the holder's host drops
// off the network: no unlock, no goodbye. It returns once the backend has
// exited (waiting up to 10 s: a signalled backend still holds its locks
// until then), and fails t when no backend held the lock or it outlived
// the wait.
func KillLockHolder(t testing.TB, key int64) {
	t.Helper()
	var killed bool
	QueryRow(t, `SELECT pg_terminate_backend(pid, 10000) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1`,
		[]any{int64(uint64(key) >> 32), int64(uint64(key) & 0xffffffff)}, &killed)
	if !killed {
		t.Fatalf("pgtest: no backend holding the advisory lock %d was terminated", key)
	}
}

// exec runs one statement on a connection of its own.
func exec(dsn, sql string) error {
	return withConn(dsn, func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, sql)
		return err
	})
}

// withConn runs fn on a connection of its own, closed before it returns
// (so no goroutine outlives the test), within a bound on the whole.
func withConn(dsn string, fn func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", EnvVar, err)
	}
	defer c.Close(ctx)
	return fn(ctx, c)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
