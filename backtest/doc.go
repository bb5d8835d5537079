// Package backtest replays a rules file over the recorded history of the
// desk's tickets (package history) with the scheduler's own planning step
// (plan.Evaluate, plan.Make: query, if, once per episode over an
// in-memory ledger, caps, grouping, classes), on a clock that steps as
// the rules' every: and cron: would have (plan.NextRun). It writes
// nothing anywhere: `deskbot rules backtest` prints its Report (text.go;
// statuspage draws the HTML one) and keeps it in the state store for the
// status pages' /backtest.
//
// # What it models, and what it cannot
//
//   - A cycle sees every change recorded at or before its time; changes
//     between two feed reads were recorded as one, so the replay sees
//     them as one too.
//   - Firings finish in their cycle (no crash, no lease, no re-read that
//     finds the ticket changed since the feed read it).
//   - Firings never wait for the desk's request budget: live, a backlog
//     whose requests exceed it drains slower than the caps alone allow.
//     Every report says so; NoteBudget measures the firings' requests a
//     minute against the budget and says whether it would have mattered.
//   - A rule whose if reads data the history does not keep (the
//     description, people's names) is marked approximate.
//   - The desk's own supervisor is replayed as it runs: every hour, over
//     the tickets updated in the last 30 days, without caps.
//
// # How it replays quickly
//
// The replay (replay.go, queue.go) gives the reports a plain replay would
// give, cycle for cycle: the plain one, kept in oracle_test.go, evaluates
// every due rule over the whole mirror and plans the whole backlog every
// cycle; TestEngineMatchesOracle compares the two over generated
// histories. The replay instead
//
//   - asks a rule again, at its run, only about the tickets changed since
//     its last run in a class of fields it reads (fields.go; while its
//     query does not hold of a ticket, a class its query reads) and those
//     whose answer may have changed with time alone (verdict.go: until
//     when an answer holds; the ledger's re-fire time under once: every;
//     the supervisor's 30-day window, for answers that hold);
//   - keeps what each rule knows of each ticket in 80 bytes, slot-major
//     (the rules asked about one ticket find theirs side by side), in
//     blocks that are never copied;
//   - keeps each rule's open decisions in heaps by the queue's two orders
//     and hands plan.Make only the head of the queue that can still be
//     admitted, counting the rest as held back (see queue.go for why that
//     is the same plan);
//   - never renders actions: rules.Set.RenderErrsWith runs their
//     templates' expressions once per new decision and at firing, which
//     is where rendering fails, and a firing's sends are counted by its
//     actions' kinds;
//   - keeps firings compactly until the report (24 bytes, 8 for the
//     supervisor's), and compares the supervisor's with deskbot's in one
//     walk in time order before the report's are built.
//
// # What it may import
//
// history, plan, rules, sdclient (the ticket type) and store (the
// RuleRun type only); no scheduler, no I/O but the history Reader it is
// given.
package backtest
