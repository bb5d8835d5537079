// Package store keeps deskbot's durable state: the episode ledger that makes
// every automation rule act exactly once per episode across restarts, crashes
// and replicas, the per-workspace ticket mirror and its change-feed cursors,
// the poll cursors, when each time rule last ran (RuleRun), on-call pages
// and acknowledgements, the Slack envelopes already handled, which
// replica runs the scheduler, and the installation's secret that signs
// what deskbot writes on the desk (Marks: thread copies, firing markers),
// so that nothing anyone else writes passes for deskbot's, and the ticket
// history (history.go: a history.Reader, appended per sync, pruned by
// retention), and the last report of `deskbot rules backtest`
// (backtests.go: its JSON, opaque here, for the status pages).
//
// One Store type runs on two engines chosen by the DSN: SQLite (a file, the
// embedded default for a single replica) and PostgreSQL (shared by several
// replicas). Both go through database/sql with the same SQL text ($N
// placeholders); only the schema files and a few clauses differ.
//
// # What it owns
//
//   - The DSN (DESKBOT_STATE). It is read here and nowhere else (dsn.go):
//     Open picks the engine; StateFile names the SQLite file, for commands
//     that look before they open; CheckStateFile says what is wrong with a
//     SQLite file's place before SQLite would. Whatever depends on the
//     engine is handed out by the Store rather than worked out by its
//     callers: (*Store).Leadership elects the one scheduler (a lock file
//     beside a SQLite database, a session advisory lock on PostgreSQL, whose
//     key, LockKey, follows the schema). Leadership carries an epoch (a
//     fencing token, table leader_epoch) that grows with each gain; Claim
//     records it, is refused (ErrNotLeader) once the store's epoch moved
//     on, and takes over the unreleased pending claims of older epochs at
//     once.
//   - The schema and its migrations (migrations/<engine>/NNNN_name.sql,
//     applied in order at Open, once across processes starting together).
//
// # Patterns to copy
//
//   - The conformance suite run on both engines: package storetest states
//     each behaviour once (storetest.Run); sqlite_test.go and
//     postgres_test.go run it on a fresh database per test
//     (storetest.PerTest), PostgreSQL in a schema of its own from
//     internal/pgtest. A new behaviour is a storetest case, so that it holds
//     on both engines by construction.
//   - Secret-free DSN handling: Open masks the DSN's password (in the URL's
//     user info or its query) as it parses it, and every error leaves
//     through (*Store).wrap, which names the engine and the operation and
//     removes each form of the password from the text, keeping errors.Is
//     for the cause but never unwrapping to the unmasked error. The
//     Leadership's errors are scrubbed the same way, and Redacted is the
//     form of a DSN that callers may log or print.
//
// # What it may import
//
// The standard library, its database drivers (modernc.org/sqlite, pgx), and
// of deskbot the types it persists: sdclient (tickets), rules (firing keys,
// once), oncall (pages) and history (records). Never scheduler, bot or cmd/deskbot, which use
// it; tests may use internal/pgtest.
package store
