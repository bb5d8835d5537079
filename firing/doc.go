// Package firing performs the firings a plan admitted: per ticket a
// re-read, the rule checked again on the fresh ticket, then for each
// firing a claim in the ledger, its actions in order (each carrying its
// marker, each recorded done, with retries and resumption after a
// crash), and its record. Execute is the cycle's execute step; it returns
// Outcomes.
//
// # What it owns
//
//   - The execute step (execute.go, fire.go, groups.go): Execute walks the
//     plan's queue at the pace the caller allows (fits), claims each
//     firing (Ledger.Claim: once per episode, across replicas), performs
//     it (fire, proceed, perform), posts a rule's grouped alerts as one
//     message (groups.go) and takes the first steps of grouped pages with
//     one escalator tick. Its dependencies come in Deps, each declared
//     here by its consumer: the Desk, the Notifier, the DMSender, Pages,
//     the ledger, the marks, the clock.
//   - The chat contract (notify.go): Notifier, Alert, and the optional
//     AlertChecker (a resumed alert is not posted twice) and
//     GroupNotifier (AlertGroup: one message for many tickets);
//     LogNotifier. The chat side implements them; cmd/deskbot wires it.
//   - Direct messages (dm.go): DMSender and DMRequest, which bot/follow
//     implements (the person resolved chat-side, looked up through the
//     counted PeopleDesk the request lends); without one a dm: is posted
//     as an alert to its fallback channel.
//   - The desk (desk.go): Desk, what a cycle reads and writes (the feed
//     declares its own subset), ClientDesk over an *sdclient.Client.
//   - People look-ups (people.go): People, the rules' rules.People,
//     names fetched ahead of evaluation (Lookup), a few a cycle.
//   - The ledger's contract (ledger.go): Ledger, every method a firing
//     needs of the durable record of which rule fired on which ticket;
//     *store.Store implements it and store/storetest checks it on SQLite
//     and PostgreSQL. ReadOnlyLedger for dry runs; ReadView reads the
//     ledger's view of a cycle's decisions for plan.Make.
//   - The rules' runs (runs.go): RuleRuns, the store's record of when
//     each rule last ran (the scheduler's and the digests' schedules);
//     RuleRunsFor keeps a dry run's own runs in memory over it.
//   - Markers (marker.go, marks.go): Marker names action i of a firing;
//     notes and replies carry it with its signed mark (store.Marks, the
//     ledger's: LedgerMarks), alerts as their key; ConversationThere
//     tells whether a note or reply already reached the ticket.
//   - Resuming (resume.go, fire.go's resumedDone): a firing taken over
//     after a crash checks each action not recorded done (UpdateHolds,
//     alreadyThere) before doing it again.
//   - Retry (retry.go): which errors only waited (Waiting), which
//     guarantee nothing was sent (NotSent), how long a refused firing
//     waits (RetryDelay); a firing it releases records why with
//     plan.LedgerStopped or plan.LedgerBudgetWait.
//   - Re-reads (reread.go): Rereads, each ticket read from the desk once
//     a cycle, before acting and to confirm an episode's end; DeskSource
//     reads them, counted, and keeps the mirror current.
//   - Episode ends (episodes.go): Episodes.End closes the episodes of
//     tickets that left a rule, after a re-read of those the mirror lacks.
//   - The reads behind `/ticket why` (explain.go): Explainer reads the
//     ticket (mirror or desk), the ledger's records and the rules' last
//     runs; plan.Why says what they mean.
//   - The dry run's execute step (dryrun.go): DryRun logs what a cycle
//     would have done, remembers it (plan.DryMemory), posts its summary
//     to a DryRunPoster and executes nothing.
//   - The plan page's outlook (outlook.go): PlanOutlook, the last
//     evaluation's decisions less what the ledger shows fired, in the
//     queue's order, each rule at its next run.
//   - Pages (page.go): StartPage and PageSpec, the on-call page a page
//     action starts.
//
// # What it may import
//
// rules, plan, sdclient and oncall (types), store (types and
// ErrNotLeader), prometheus (the counters it moves); never scheduler, bot
// or cmd. Pages is the scheduler's adapter over its escalator.
package firing
