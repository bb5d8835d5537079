package cycle

import "github.com/deskbot/deskbot/feed"

// Result says what one cycle did for one job (rules sharing a query
// and schedule).
type Result struct {
	Job   string   // the job's name: its first rule, +N for the others
	Rules []string // the job's rules
	// Complete is true when the sync was complete (the mirror holds every
	// open ticket as fresh as the feed) and the episodes were reconciled.
	Complete bool
	Err      error  // why the cycle is incomplete
	Skipped  string // why the job did not run (stopping), or ""
	Tickets  int    // tickets in the mirror the rules were evaluated on
	// Requests is every desk request of the cycle (sync, re-reads,
	// actions, retries included): the same in each job of one cycle.
	Requests int
	// Sync is the cycle's sync, shared by its jobs.
	Sync *feed.Synced
	// Decisions is how many (rule, ticket) decisions evaluation produced;
	// Fired how many firings finished in this cycle.
	Decisions int
	Fired     int // see Decisions
	// HeldBack is how many decisions of the job's rules the per-cycle
	// caps held back, or the cycle queued when its time was up, for later
	// cycles.
	HeldBack int
	Ended    int // episodes ended
	// Kept is how many episodes of tickets missing from the mirror stayed
	// open: a re-read showed the ticket still matching, or it could not be
	// re-read in this cycle.
	Kept int
}
