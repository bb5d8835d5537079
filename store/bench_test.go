package store_test

import (
	"path/filepath"
	"testing"

	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

// BenchmarkClaim reports claims/s on each engine (PostgreSQL only when
// DESKBOT_TEST_POSTGRES is set).
func BenchmarkClaim(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		s, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchClaim(b, s)
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := pgDSN(b)
		s, err := store.Open(b.Context(), dsn, store.WithSchema(pgSchema(b, dsn)))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchClaim(b, s)
	})
}

// BenchmarkMirrorApply reports tickets/s of MirrorApply on each engine,
// applying 100,000 tickets in batches of 100 as a full sync of a large desk
// does (PostgreSQL only when DESKBOT_TEST_POSTGRES is set).
func BenchmarkMirrorApply(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		s, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchMirrorApply(b, s)
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := pgDSN(b)
		s, err := store.Open(b.Context(), dsn, store.WithSchema(pgSchema(b, dsn)))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		storetest.BenchMirrorApply(b, s)
	})
}
