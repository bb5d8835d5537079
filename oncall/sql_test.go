package oncall_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/pgtest"
	"github.com/deskbot/deskbot/store"
	"github.com/deskbot/deskbot/store/storetest"
)

// sqliteDB is a fresh SQLite file for t (storetest.PerTest).
func sqliteDB(t *testing.T) (string, []store.Option) {
	return filepath.Join(t.TempDir(), "state.db"), nil
}

// postgresDB is a schema of t's own on the PostgreSQL of
// DESKBOT_TEST_POSTGRES, dropped when t ends (storetest.PerTest); t is
// skipped when it is not set.
func postgresDB(t *testing.T) (string, []store.Option) {
	dsn, schema := pgtest.Schema(t)
	return dsn, []store.Option{store.WithSchema(schema)}
}

// Two replicas, each with its own handle on one SQLite file, never page a
// step twice.
func TestTwoReplicasSQLite(t *testing.T) {
	open := storetest.PerTest(sqliteDB)
	twoReplicas(t, open(t), open(t))
}

// The same on PostgreSQL, in a schema of the test's own.
func TestTwoReplicasPostgres(t *testing.T) {
	open := storetest.PerTest(postgresDB)
	twoReplicas(t, open(t), open(t))
}

// A process restarted on the same SQLite file continues the escalation at
// the right level and pages nothing twice.
func TestRestartSQLite(t *testing.T) {
	open := storetest.PerTest(sqliteDB)
	a := newRig(t, open(t))
	if _, _, err := a.esc.Start(t.Context(), spec42, t0); err != nil {
		t.Fatal(err)
	}
	a.tick(t, 10*time.Minute)
	const k = "page-urgent/42/1"
	expectSent(t, a.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")

	b := newRig(t, open(t)) // the restarted process
	b.tick(t, 10*time.Minute)
	b.tick(t, 24*time.Minute)
	expectSent(t, b.pager)
	b.tick(t, 25*time.Minute)
	expectSent(t, b.pager, k+" step 3 L3 R1 S0GROUP")
	if _, ok, err := b.esc.Ack(t.Context(), k, "U0GROUPMEMBER", t0.Add(30*time.Minute)); !ok || err != nil {
		t.Fatalf("Ack = %v, %v", ok, err)
	}
	a.tick(t, 3*time.Hour)
	b.tick(t, 3*time.Hour)
	expectSent(t, a.pager, k+" step 1 L1 R1 alice@example.com", k+" step 2 L2 R1 boss@example.com")
	expectSent(t, b.pager, k+" step 3 L3 R1 S0GROUP")
	if n := len(b.desk.notesOf(42)); n != 1 {
		t.Errorf("%d acknowledgement notes; want 1", n)
	}
}
