// Package testkit holds the small helpers that the tests of several
// packages needed alike and had each written again: a logger for tests,
// a rules file or a state store (or the test fails), and an address of
// this machine that is not loopback.
//
//	log := testkit.Logger()         // debug to stderr with -v, else nothing
//	set := testkit.Rules(t, yaml)   // rules.Load("test.yaml", …) or t.Fatal
//	st := testkit.Store(t, dsn)     // store.Open or t.Fatal, closed when the test ends
//	ip := testkit.NonLoopbackIPv4() // "" when the machine has none
//	y := testkit.OncallRules("U0X")  // a rules file with an on-call schedule of U0X
//
// It is imported by tests only (feed, scheduler, bot/follow, statuspage,
// cmd/deskbot) and imports rules and store of deskbot's own; the tests of
// those two cannot use it.
package testkit
