package store_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

const pgEnv = "DESKBOT_TEST_POSTGRES"

// pgDSN returns the test server's DSN, or skips t.
func pgDSN(t testing.TB) string {
	dsn := os.Getenv(pgEnv)
	if dsn == "" {
		t.Skipf("%s is not set; set it to a PostgreSQL DSN, e.g. postgres://postgres:postgres@127.0.0.1:5432/deskbot_test?sslmode=disable, to run the PostgreSQL tests", pgEnv)
	}
	return dsn
}

// pgSchema creates a schema of its own for t and drops it when t ends, so
// that parallel tests and packages never see each other's tables.
func pgSchema(t testing.TB, dsn string) string {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "storetest_" + hex.EncodeToString(b)
	if _, err := db.ExecContext(t.Context(), "CREATE SCHEMA "+name); err != nil {
		db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.Exec("DROP SCHEMA " + name + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}

var pgOpen = storetest.PerTest(func(t *testing.T) (string, []store.Option) {
	dsn := pgDSN(t)
	return dsn, []store.Option{store.WithSchema(pgSchema(t, dsn))}
})

func TestPostgresConformance(t *testing.T) {
	pgDSN(t)
	storetest.Run(t, pgOpen)
}

// The schema can also be chosen with search_path in the DSN itself.
func TestPostgresSearchPathInDSN(t *testing.T) {
	dsn := pgDSN(t)
	schema := pgSchema(t, dsn)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	s, err := store.Open(t.Context(), dsn+sep+"search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Engine() != store.Postgres {
		t.Errorf("Engine = %q", s.Engine())
	}
	if err := s.SetCursor(t.Context(), "c", "v", time.Now()); err != nil {
		t.Fatal(err)
	}
	s2, err := store.Open(t.Context(), dsn, store.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, ok, err := s2.Cursor(t.Context(), "c"); !ok || err != nil || v != "v" {
		t.Errorf("cursor through WithSchema = %q, %v, %v; want the value set through search_path", v, ok, err)
	}
}

// Several processes starting at once migrate the same empty schema once.
func TestPostgresConcurrentMigrations(t *testing.T) {
	dsn := pgDSN(t)
	schema := pgSchema(t, dsn)
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			s, err := store.Open(t.Context(), dsn, store.WithSchema(schema))
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestPostgresMissingSchema(t *testing.T) {
	dsn := pgDSN(t)
	_, err := store.Open(t.Context(), dsn, store.WithSchema("no_such_schema_here"))
	if err == nil || !strings.Contains(err.Error(), "postgres") || !strings.Contains(err.Error(), "search_path") {
		t.Errorf("Open with a missing schema = %v; want an error naming postgres and search_path", err)
	}
}
