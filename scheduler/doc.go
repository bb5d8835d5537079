// Package scheduler runs deskbot's automation rules on a clock: it ticks
// the cycle, chooses the jobs due, keeps polling within the background
// request budget, leads (or not) among replicas, and assembles each cycle
// from the steps the packages below it provide. A cycle costs about one
// request per hundred changed tickets, whatever the desk's size, plus the
// re-reads before actions.
//
// # What it owns
//
//   - The cycle (cycle.go): runCycle assembles the steps, each passing its
//     result to the next: sync (package feed: the change feed and the
//     mirror; feed.go builds the feed) → plan (plan.Evaluate, the ledger's
//     view read by firing.ReadView, plan.Make: the queue's order, storm
//     control's caps and groups) → execute at the queue's pace
//     (firing.Execute, or firing.DryRun in a dry run; execute.go, dryrun.go)
//     → reconcile the episodes (reconcile.go, firing.Episodes) → record
//     (endCycle: the runs, the planner's history, the metrics).
//   - The clock and the jobs (scheduler.go, jobs.go, chores.go): gocron
//     ticks the cycle at the greatest common divisor of the rules'
//     intervals, the escalator's tick (firing.Paging) and the ledger's
//     pruning (firing.Prune); the rules sharing a query and a schedule
//     form a job, due by plan.Schedule over the rules' last runs kept in
//     the store (schedule.go, firing.RuleRuns), so restarts, reloads and
//     new leaders carry the schedules on.
//   - The request budget: the planner (budget.go) stretches every
//     interval by one factor when recent cycles' polling would exceed the
//     background budget; the queue's pace (queue.go) starts no firing that
//     would wait for the budget past the next tick, leaving the rest
//     queued, most urgent first (plan.WaitingMemory).
//   - Leadership (WithElector): gocron asks the elector before each run;
//     the feed's LiveMirror reads the store on a replica that does not
//     lead.
//   - Options (options.go), the metrics (metrics.go; the execute step's
//     counters are firing.Metrics), and the read-only views: /readyz
//     (Ready, MirrorHealth, RuleHealth), and Memory, what the status
//     pages, `rules plan` and the explainer read (their views, digest
//     previews and what the caps held back are built there).
//   - What it calls of the feed's other followers (followers.go), which
//     live in bot/follow beside the chat: feed subscribers (WithSubscriber),
//     TickFollowers run on the leader's ticks after the sync (digests),
//     and the firing.DMSender of a firing's dm: (WithDMs).
//
// # What it may import
//
// The floors, lowest first: sdclient/filter, sdclient, store, rules,
// feed, plan, firing, oncall, scheduler, bot, cmd. The scheduler imports
// the floors below it and never bot or cmd; the desk is reached only
// through firing.Desk, chat only through firing.Notifier and the
// followers' interfaces.
//
// # Patterns to copy
//
//   - A cycle's steps pass values: none calls back into an earlier one,
//     and each keeps its own memory (plan.MatchMemory, plan.HeldMemory,
//     plan.WaitingMemory, firing.DryRun, firing.People) behind a method.
//   - Options: Option is func(*config) over an unexported config; New
//     validates and returns the error. The feed's options pass straight
//     through (WithFeed).
package scheduler
