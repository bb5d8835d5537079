package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

var pgOpen = storetest.PerTest(func(t *testing.T) (string, []store.Option) {
	dsn, schema := pgtest.Schema(t)
	return dsn, []store.Option{store.WithSchema(schema)}
})

func TestPostgresConformance(t *testing.T) {
	pgtest.DSN(t)
	storetest.Run(t, pgOpen)
}

// The schema can also be chosen with search_path in the DSN itself.
func TestPostgresSearchPathInDSN(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
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
	dsn, schema := pgtest.Schema(t)
	openConcurrently(t, 6, dsn, store.WithSchema(schema))
}

func TestPostgresMissingSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	_, err := store.Open(t.Context(), dsn, store.WithSchema("no_such_schema_here"))
	if err == nil || !strings.Contains(err.Error(), "postgres") || !strings.Contains(err.Error(), "search_path") {
		t.Errorf("Open with a missing schema = %v; want an error naming postgres and search_path", err)
	}
}
