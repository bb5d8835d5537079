// Package scheduler runs deskbot's automation rules on a clock: it ticks
// the cycle, chooses the jobs due, keeps polling within the background
// request budget, leads (or not) among replicas, and has package cycle
// run each cycle's steps.
//
// # What it owns
//
//   - The cycle (cycle.go): runCycle passes the gate (stopping, the
//     leader, the budget's stretch), chooses the jobs due, hands them to
//     the cycle.Runner built by New (sync → plan → execute at the queue's
//     pace → reconcile; its memories read through Memory) and records
//     what it did (endCycle: the runs, the planner's history, the metrics).
//   - The clock and the jobs (scheduler.go, jobs.go, chores.go): gocron
//     ticks the cycle at the greatest common divisor of the rules'
//     intervals, the escalator's tick (firing.Paging) and the ledger's
//     pruning (firing.Prune); the rules sharing a query and a schedule
//     form a job, due by plan.Schedule over the rules' last runs kept in
//     the store (schedule.go, firing.RuleRuns).
//   - The request budget: the planner (budget.go) stretches every
//     interval by one factor when recent cycles' polling would exceed the
//     background budget; the queue's pace (queue.go) starts no firing that
//     would wait for the budget past the next tick. Every desk request of
//     a cycle reaches it through cycle.In.Count.
//   - Leadership (WithElector; the feed's LiveMirror reads the store on a
//     replica that does not lead), options (options.go; also the feed's
//     other followers, in bot/follow: WithSubscriber, WithTickFollower,
//     WithDMs), the metrics (metrics.go; the steps' are cycle.Metrics), and
//     the views (views.go): /readyz (MirrorHealth, RuleHealth), and Ready
//     and Memory, what the status pages, `rules plan` and the explainer read.
//
// # What it may import
//
// The floors, lowest first: sdclient/filter, sdclient, store, rules,
// feed, plan, firing, oncall, cycle, scheduler, bot, cmd. The scheduler
// imports the floors below it and never bot or cmd; the desk is reached
// only through firing.Desk, chat only through firing.Notifier and the
// followers' interfaces.
//
// # Patterns to copy
//
// Option is func(*config); New validates it. The feed's options pass
// straight through (WithFeed), the cycle's settings into cycle.Settings.
package scheduler
