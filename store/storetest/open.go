package storetest

import (
	"testing"

	"github.com/deskbot/deskbot/store"
)

// OpenStore opens the store at dsn for t, failing t when it cannot, and
// closes it when t ends: the set-up of a test that needs a store of a given
// engine (with internal/pgtest for PostgreSQL:
// OpenStore(t, dsn, store.WithSchema(schema))).
func OpenStore(t testing.TB, dsn string, opts ...store.Option) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), dsn, opts...)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
