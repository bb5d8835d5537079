package pgtest_test

import (
	"net/url"
	"testing"

	"go.uber.org/goleak"

	"github.com/deskbot/deskbot/internal/pgtest"
)

// TestMain fails the tests if a connection's goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A test's schema exists while it runs, is selected by SchemaDSN's
// search_path, and is gone when the test ends.
func TestSchemaLivesAsLongAsItsTest(t *testing.T) {
	pgtest.DSN(t)
	var schema string
	t.Run("inner", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		schema = u.Query().Get("search_path")
		var n int
		pgtest.QueryRow(t, `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, []any{schema}, &n)
		if schema == "" || n != 1 {
			t.Fatalf("schema %q: %d found while the test runs, want 1", schema, n)
		}
	})
	var n int
	pgtest.QueryRow(t, `SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, []any{schema}, &n)
	if n != 0 {
		t.Errorf("schema %q still there after its test", schema)
	}
}
