// Package pgtest sets up PostgreSQL for tests, once for every package: a
// test that needs PostgreSQL asks for a schema of its own and skips, with a
// message that says how to run it, when DESKBOT_TEST_POSTGRES is not set.
//
//	dsn, schema := pgtest.Schema(t)         // for store.Open(ctx, dsn, store.WithSchema(schema))
//	dsn := pgtest.SchemaDSN(t)              // a DSN whose search_path selects the schema (DESKBOT_STATE of a process)
//	dsn := pgtest.DSN(t)                    // the server itself, nothing created
//	pgtest.KillLockHolder(t, key)           // end the backend holding an advisory lock (leader failover)
//	pgtest.QueryRow(t, sql, args, &dest)    // any other statement an administrator would run
//
// Every schema is dropped when its test ends, and every connection pgtest
// opens is closed before its call returns, so goleak finds nothing of it.
//
// It is imported by tests only, of any floor (store, oncall, scheduler,
// cmd/deskbot), and imports nothing of deskbot's own.
package pgtest
