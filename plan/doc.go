// Package plan decides what a cycle of deskbot's rules does, as pure
// functions of values: input values in, decisions out, no I/O.
//
// # What it owns
//
//   - Evaluation (evaluate.go): Evaluate runs the due rules over the
//     mirrored tickets at a given now; the scheduler, the dry run and the
//     explanations get the same decisions.
//   - Planning a cycle (plan.go): Make takes the decisions, the ledger's
//     view of them (LedgerView: firings under way and their states, read
//     by the caller) and since when earlier cycles left each waiting, and
//     returns a Plan: the decisions in the queue's order, what storm
//     control admitted, held back (Held) and groups.
//   - Who goes first (queue.go, waiting.go): classes (ClassOf), the
//     queue's order (Order), with the routine share, and its age across
//     cycles (Waiting, WaitingSince; kept by WaitingMemory).
//   - Storm control (storm.go): the per-rule and per-cycle caps
//     (RuleCap), grouping over group_over (GroupOver), and what each
//     rule's last cycle held back (HeldMemory, for the explainer).
//   - The explanation behind `/ticket why` and `deskbot rules why`
//     (explain.go): Why.Text from the values the caller read (the
//     ticket, the ledger's records, the rules' last runs, what the caps
//     held back), and MirrorSource, whether the mirror is fresh enough.
//   - What the status pages show of a cycle (matches.go, memory.go):
//     each rule's matches (Matches), kept across cycles with since when
//     each ticket matches and the decisions the plan page starts from
//     (MatchMemory), and what was held back (HeldTickets).
//   - When a rule runs next (nextrun.go): NextRun, the one answer for the
//     scheduler, the plan and the explanations, and NextRunText; when a
//     scheduler's job is due (schedule.go: Schedule, from the rules'
//     stored runs, then from its own runs).
//   - The dry run and `deskbot rules plan` (outlook.go, drain.go,
//     dryrun.go): what a cycle would do (Outlook, its "would have" lines,
//     its chat summary), each rule at its next run (NextRuns, AtNextRuns),
//     the dry run's memory of what it would have fired (DryMemory), and
//     how a backlog drains under the caps and the request budget
//     (Outlook.Drain).
//
// # What it may import
//
// rules, sdclient (the ticket type) and store (the RuleRun type), and no
// I/O of theirs: no desk request, no store call, no clock (now is an
// argument). Never scheduler, bot or cmd.
package plan
