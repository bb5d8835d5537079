// Package storetest is the conformance suite every engine of package store
// must pass: one set of behaviours, checked the same way on SQLite and
// PostgreSQL.
//
// It owns the behaviours (the ledger's claims and episodes, the mirror, the
// on-call pages) and the helpers that open a store per test (Open,
// PerTest, OpenStore). It may import store, rules and the standard
// library's testing; only tests import it. This is the pattern to copy for
// a new engine: run Run with an opener of the engine's databases.
package storetest
