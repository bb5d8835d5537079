// Package firing holds what performing a rule's firing rests on: the
// firing ledger's contract, the markers that make actions recognisable
// after a crash, the checks a resumed firing makes before repeating an
// action, the retry policy, the once-per-cycle re-read, and the page a
// rule's page action starts.
//
// # What it owns
//
//   - The ledger's contract (ledger.go): Ledger, every method a firing
//     needs of the durable record of which rule fired on which ticket
//     (claims with leases, actions done, finish, release, episode ends);
//     *store.Store implements it and store/storetest checks it on SQLite
//     and PostgreSQL. ReadOnlyLedger for dry runs; ReadView reads the
//     ledger's view of a cycle's decisions for plan.Make.
//   - Markers (marker.go): Marker names action i of a firing; notes and
//     replies carry it with its signed mark (store.Marks), alerts as
//     their key; ConversationThere tells whether a note or reply already
//     reached the ticket.
//   - Resuming (resume.go): UpdateHolds, whether an update's values
//     already hold; MergeTags, the tags an update sends.
//   - Retry (retry.go): which errors only waited (Waiting), which
//     guarantee nothing was sent (NotSent), how long a refused firing
//     waits (RetryDelay), and what the ledger's last error says
//     (LastAttempt).
//   - Re-reads (reread.go): Rereads, each ticket read from the desk once
//     a cycle, before acting and to confirm an episode's end.
//   - Pages (page.go): PageSpec, the on-call page a page action starts.
//
// The loop that claims, re-reads, performs and records (the scheduler's
// execute step) still lives in scheduler, beside the Notifier and direct
// message contracts it calls.
//
// # What it may import
//
// rules, plan, sdclient, store (types) and oncall (types); never
// scheduler, bot or cmd.
package firing
