package store_test

import (
	"path/filepath"
	"testing"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

// BenchmarkClaim reports claims/s on each engine (PostgreSQL only when
// DESKBOT_TEST_POSTGRES is set).
func BenchmarkClaim(b *testing.B) { benchEngines(b, storetest.BenchClaim) }

// BenchmarkMirrorApply reports tickets/s of MirrorApply on each engine,
// applying 100,000 tickets in batches of 100 as a full sync of a large desk
// does (PostgreSQL only when DESKBOT_TEST_POSTGRES is set).
func BenchmarkMirrorApply(b *testing.B) { benchEngines(b, storetest.BenchMirrorApply) }

// benchEngines runs bench on a fresh store of each engine.
func benchEngines(b *testing.B, bench func(*testing.B, *store.Store)) {
	for _, e := range []struct {
		name string
		open func(*testing.B) (string, []store.Option)
	}{
		{"sqlite", func(b *testing.B) (string, []store.Option) { return filepath.Join(b.TempDir(), "bench.db"), nil }},
		{"postgres", func(b *testing.B) (string, []store.Option) {
			dsn, schema := pgtest.Schema(b)
			return dsn, []store.Option{store.WithSchema(schema)}
		}},
	} {
		b.Run(e.name, func(b *testing.B) {
			dsn, opts := e.open(b)
			s, err := store.Open(b.Context(), dsn, opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			bench(b, s)
		})
	}
}
