// Package testkit holds the small helpers that the tests of several
// packages needed alike and had each written again: a logger for tests,
// a rules file, a state store, the desk simulator on a fake clock or a
// client of it (or the test fails), and an address of this machine that
// is not loopback.
//
//	log := testkit.Logger()         // debug to stderr with -v, else nothing
//	set := testkit.Rules(t, yaml)   // rules.Load("test.yaml", …) or t.Fatal
//	st := testkit.Store(t, dsn)     // store.Open or t.Fatal, closed when the test ends
//	c := testkit.DeskClient(t, sim) // sdclient on sdsim: no budget to spend, retries without waiting
//	clk, sim := testkit.FakeDesk(t, t0, opts...) // sdsim on a fake clock at t0, closed when the test ends
//	ip := testkit.NonLoopbackIPv4() // "" when the machine has none
//	y := testkit.OncallRules("U0X")  // a rules file with an on-call schedule of U0X
//	y := testkit.NoteRules("a", "b") // rules a then b, each noting every open ticket
//
// It is imported by tests only and imports rules, store, sdclient and
// sdsim of deskbot's own (and clockwork); the tests of those cannot use it.
package testkit
