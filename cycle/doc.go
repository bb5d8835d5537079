// Package cycle runs one cycle of deskbot's rules: a Runner, built once
// from its Deps, whose Run passes values from step to step, in the spirit
// of Alertmanager's notify pipeline. The scheduler decides when a cycle
// runs, which jobs are due and at what pace; Run does the rest. A cycle
// costs about one request per hundred changed tickets, whatever the
// desk's size, plus the re-reads before actions.
//
// # What it owns
//
//   - The steps of a cycle (run.go), in order: sync the mirror (package
//     feed) → the tick followers (follow.go: TickFollower, Tick; digests)
//     → the people the rules read (firing.People) → plan (plan.Evaluate,
//     the ledger's view read by firing.ReadView, plan.Make; storm
//     control's metrics and logs) → execute at the caller's pace
//     (execute.go: firing.Execute, or firing.DryRun in a dry run) →
//     reconcile the episodes (reconcile.go: firing.Episodes) → end: save
//     the tickets re-read to the mirror and remember what was held back.
//     Out says what the cycle did, per job (Result) and in requests.
//   - What the cycles remember from one to the next (Memories): what each
//     rule's last cycle held back and since when it waits, each rule's
//     matches, the dry run's firings, the people looked up, the rules
//     over their run-time budget.
//   - Every desk request a cycle sends is told, as it is sent, to In.Count
//     (the scheduler's budget): a callback, no context value, no call back
//     into the scheduler.
//
// # What it may import
//
// The floors, lowest first: sdclient/filter, sdclient, store, rules,
// feed, plan, firing, oncall, cycle, scheduler, bot, cmd. cycle imports
// the floors below it (feed, plan, firing, rules, sdclient; internal/prom
// for its metrics) and never scheduler, bot or cmd.
package cycle
