// Package scheduler runs deskbot's automation rules. It follows the desk's
// change feed into a local mirror of the open tickets (kept in the state
// store, rebuilt by a periodic full sync), evaluates every due rule on the
// mirror, ends the episodes of tickets that left a rule, and executes the
// decisions: a re-read of each ticket before acting, each firing claimed
// in the ledger so that it happens once per episode even across crashes
// and replicas. A cycle costs about one request per hundred changed
// tickets, whatever the desk's size, plus the re-reads before actions;
// cycles are stretched to stay within the background request budget.
//
// # What it owns
//
//   - The cycle (cycle.go): runCycle assembles the steps, each passing
//     its result to the next: sync (package feed, the change feed and the
//     mirror; feed.go here builds it and runs a cycle's sync) → plan
//     (package plan: pure evaluation, the queue's order, storm control's
//     caps and groups, over the ledger's view read first: firing.ReadView)
//     → execute at the queue's pace (firing.Execute; execute.go hands it
//     the Notifier, the DMSender and the escalator's firing.Paging as
//     cmd/deskbot wired them; queue.go's pace) → reconcile episodes (reconcile.go) → record (endCycle).
//   - When each job is due (schedule.go): every rule's last run is kept
//     in the store (RuleRuns), so restarts, reloads and new leaders carry
//     the schedules on and a cron rule never fires because a process is
//     new; plan.NextRun is the one answer to when a rule runs next, for the
//     scheduler, the plan and the explanations.
//   - The execute step is package firing's: claim in the ledger
//     (firing.Ledger, the contract *store.Store implements, no optional
//     abilities discovered by type assertion), re-read, perform with
//     markers, record. Whether a (rule, ticket) may fire again is
//     rules.Once.NextEligible on its rules.FiringRecord, the one rule book
//     that the store's Claim, the pre-check before a re-read
//     (plan.LedgerView.AlreadyFired), the dry run and the explanation
//     (firing.Explainer and plan.Why: `/ticket why`, `deskbot rules why`)
//     all use.
//   - The queue's pace (queue.go: the budget a cycle may still spend
//     before its next tick, and since when held-back decisions wait; the
//     classes and order are plan's), storm control's execution side
//     (storm.go: the cap metrics and memory, grouped alerts and pages),
//     the request budget planner (budget.go), the dry run's wiring
//     (dryrun.go: firing.DryRun says and remembers what a cycle would
//     have done; the Outlook and the drain simulation are plan's),
//     the jobs of the escalator's tick and the ledger's pruning and
//     /readyz's rules over their run-time budget (chores.go; the work is
//     firing's: Paging, Prune, Budgets), the scheduler's metrics (metrics.go), and the
//     read-only view the status pages take (statusview.go: StatusView,
//     each rule's last evaluation kept in a plan.MatchMemory,
//     MirroredTickets, PlanOutlook over firing.PlanOutlook; no desk
//     request).
//   - What it calls of the feed's other followers (followers.go),
//     which live in bot/follow beside the chat: feed.Subscribers told each
//     sync's changes (live threads), TickFollowers run on the leader's
//     ticks after the sync (digests), and the firing.DMSender that
//     resolves and sends a firing's dm: (WithDMs).
//
// # What it may import
//
// The floors, lowest first: sdclient/filter, sdclient, store, rules,
// feed, plan, firing, oncall, scheduler, bot, cmd. The scheduler imports
// the floors below it (sdclient and its filter, store for the mirror's
// types, rules, feed for the change feed and the mirror, plan, firing,
// oncall) and never bot or cmd; the desk is reached only through
// firing.Desk (firing.ClientDesk adapts an *sdclient.Client), chat only
// through firing.Notifier and the followers' interfaces.
//
// # Patterns to copy
//
//   - Pure rule evaluation: plan.Evaluate is the rules over the
//     mirrored tickets at a given now, with no I/O; everything that talks
//     to the desk or the ledger happens before (sync) or after (execute).
//     Tests and the dry run get the same decisions as a live cycle.
//   - The crash-safe firing (package firing, fire.go): claim in the ledger
//     (pending, with a lease), perform each action carrying an invisible
//     marker (firing.Marker) signed with the installation's secret
//     (firing.LedgerMarks, store.Marks), record each action done, then Finish. A claim is
//     stale when its lease ran out or, with the store's leadership, when an
//     older leadership epoch made it (its holder died or no longer leads):
//     a new leader takes it over in its first cycle. A worker
//     that takes over a stale claim (Firing.Resumed) checks, for every
//     action not recorded done, whether it already reached the desk or
//     chat (firing's alreadyThere, UpdateHolds) before doing it again. Actions get
//     their own context (actionContext), so a shutdown lets the request
//     under way finish instead of cutting a firing in half.
//   - The limiter and the budget: the sdclient limiter enforces the hard
//     request rate; the planner (budget.go) keeps polling within the
//     background share of it by stretching every interval by one factor
//     computed from recent cycles' polling (the sync, not the firings),
//     the per-cycle caps (plan) bound what one cycle may start, and a
//     scheduled cycle starts no firing that would wait for the budget
//     past its next tick (queue.go), leaving the rest queued, most urgent
//     first, for the next ticks: the feed keeps its interval.
//   - Options: Option is func(*config) over an unexported config; New
//     validates and returns the error. The feed's options pass straight
//     through (WithFeed).
package scheduler
