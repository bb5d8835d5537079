package rules

import "time"

// FiringStatus is the state of a firing in the ledger.
type FiringStatus string

// The states of a firing.
const (
	// FiringPending: claimed, actions possibly under way; it can be taken
	// over once its lease runs out.
	FiringPending FiringStatus = "pending"
	// FiringDone: every action performed (the firing was finished).
	FiringDone FiringStatus = "done"
)

// FiringRecord is what the ledger knows about one (rule, ticket): its
// episode and current firing. The ledger's claim decides with it (through
// Once.NextEligible), and explanations such as `/ticket why` print it.
type FiringRecord struct {
	Key            FiringKey // the (rule, ticket)
	Episode        int64     // 1 for the first episode
	Open           bool      // the episode is open: the ticket matched at the last complete poll
	EpisodeStarted time.Time // when the episode opened
	EpisodeEnded   time.Time // zero while open

	// The current firing: the latest one claimed in the episode; FiringID
	// is 0 when there is none.
	FiringID   int64        // the ledger's id of the firing
	Seq        int64        // 1 for the first firing of the episode; more with OnceEvery
	State      FiringStatus // pending or done
	ClaimedAt  time.Time    // when the current holder claimed it
	LeaseUntil time.Time    // zero once released or done
	FiredAt    time.Time    // zero while pending
	Attempts   int          // 1, plus one per take-over of a stale claim
	Done       []int        // indexes of the actions recorded as done
	LastError  string       // why the last attempt failed; "" once done

	// LastFiredAt is when any firing of this rule on this ticket last
	// finished, whatever the episode; zero if none did.
	LastFiredAt time.Time
}

// NextEligible is the ledger's rule book in one pure function: from the
// ledger's record of a (rule, ticket), when a claim under o may win again.
// A claim at now wins when ok and !now.Before(at); the zero at means at
// once. ok is false when no claim can win while the record stays as it
// is (for OnceEpisode, until a complete poll ends the episode; for
// OnceTicket, ever):
//
//   - OnceTicket, the rule ever claimed the ticket: a pending firing (left
//     by a crash or a release) is eligible when its lease runs out, so that
//     it is completed rather than repeated or lost; a done one never again.
//   - the episode is closed (or there is none): at once, a new episode.
//   - open episode without a firing (a repair): at once.
//   - open episode, firing pending: when its lease runs out (take-over).
//   - open episode, firing done: OnceEvery at FiredAt + Period; otherwise
//     not until the episode ends.
func (o Once) NextEligible(r FiringRecord) (at time.Time, ok bool) {
	claimed := r.FiringID != 0
	pending := claimed && r.State == FiringPending
	switch {
	case o.Mode == OnceTicket && claimed:
		if pending {
			return r.LeaseUntil, true
		}
		return time.Time{}, false
	case !r.Open, !claimed:
		return time.Time{}, true
	case pending:
		return r.LeaseUntil, true
	case o.Mode == OnceEvery && !r.FiredAt.IsZero():
		return r.FiredAt.Add(o.Period), true
	}
	return time.Time{}, false
}

// MayFire reports whether a claim under o at now may win on r (see
// NextEligible).
func (o Once) MayFire(r FiringRecord, now time.Time) bool {
	at, ok := o.NextEligible(r)
	return ok && !now.Before(at)
}
