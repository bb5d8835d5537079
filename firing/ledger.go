package firing

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// Ledger is the durable record of which rule fired on which ticket: the
// whole contract the scheduler needs of it (*store.Store implements it;
// store/storetest checks it on both engines). Every method must be atomic
// across processes sharing the store. Whether a claim may win is
// rules.Once.NextEligible on the (rule, ticket)'s FiringRecord: the ledger's
// Claim decides with it, and the pre-check before a re-read and `why` read
// it the same way.
type Ledger interface {
	// Claim reserves the right to fire key at now under once. The claim is
	// pending until Finish; a pending claim older than lease may be taken
	// over by another caller (Resumed).
	Claim(ctx context.Context, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration) (rules.Firing, error)
	// ClaimSince is Claim that also records, with a new firing, since:
	// when the ticket began to match the rule (the status pages' "took").
	ClaimSince(ctx context.Context, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration, since time.Time) (rules.Firing, error)
	// ActionDone records that action number i of the firing reached its target.
	ActionDone(ctx context.Context, firingID int64, i int) error
	// Finish marks the firing done at now.
	Finish(ctx context.Context, firingID int64, now time.Time) error
	// Release gives a pending claim up until retryAt (the zero time: at
	// once) instead of until its lease runs out, keeping reason as the
	// firing's last error: the next cycle from retryAt on retries it.
	Release(ctx context.Context, firingID int64, retryAt time.Time, reason string) error
	// EndEpisodes closes the open episodes of rule whose ticket is not in
	// matching. Call it only after a complete poll of the rule's query.
	EndEpisodes(ctx context.Context, rule string, matching []int64, now time.Time) (int, error)
	// OpenEpisodes returns the tickets on which rule has an open episode.
	OpenEpisodes(ctx context.Context, rule string) ([]int64, error)
	// BegunFirings returns, by rule, the tickets whose current firing has
	// begun and must finish although the ticket may no longer match.
	BegunFirings(ctx context.Context) (map[string][]int64, error)
	// FiringStates reads the records of many tickets of one rule at once,
	// without Done; tickets the rule never claimed are absent.
	FiringStates(ctx context.Context, rule string, ticketIDs []int64) (map[int64]rules.FiringRecord, error)
	// PruneFirings deletes the firings that no longer decide anything and
	// ended before before, and returns how many.
	PruneFirings(ctx context.Context, before time.Time) (int, error)

	FiringStates
}

// FiringStates is the cheap read of the ledger (*store.Store implements
// it): explanations read it, and the scheduler's pre-check of a decision
// that the batch read (Ledger.FiringStates) did not cover.
type FiringStates interface {
	// FiringState reports the ledger's record of key; false when the rule
	// never claimed the ticket.
	FiringState(ctx context.Context, key rules.FiringKey) (rules.FiringRecord, bool, error)
}

// ReadOnlyLedger is a Ledger that reads through fs (nil: the ledger is
// empty) and refuses every write: a dry run (`deskbot rules plan`) that
// must never claim a firing.
func ReadOnlyLedger(fs FiringStates) Ledger { return readOnly{fs} }

type readOnly struct{ fs FiringStates }

var errReadOnly = errors.New("the ledger is read only")

func (readOnly) Claim(context.Context, rules.FiringKey, rules.Once, time.Time, time.Duration) (rules.Firing, error) {
	return rules.Firing{}, errReadOnly
}

func (r readOnly) ClaimSince(ctx context.Context, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration, _ time.Time) (rules.Firing, error) {
	return r.Claim(ctx, key, once, now, lease)
}
func (readOnly) ActionDone(context.Context, int64, int) error            { return errReadOnly }
func (readOnly) Finish(context.Context, int64, time.Time) error          { return errReadOnly }
func (readOnly) Release(context.Context, int64, time.Time, string) error { return errReadOnly }
func (readOnly) EndEpisodes(context.Context, string, []int64, time.Time) (int, error) {
	return 0, errReadOnly
}
func (readOnly) OpenEpisodes(context.Context, string) ([]int64, error)    { return nil, nil }
func (readOnly) BegunFirings(context.Context) (map[string][]int64, error) { return nil, nil }

// PruneFirings prunes nothing: a dry run leaves the ledger as it is.
func (readOnly) PruneFirings(context.Context, time.Time) (int, error) { return 0, nil }

func (r readOnly) FiringState(ctx context.Context, key rules.FiringKey) (rules.FiringRecord, bool, error) {
	if r.fs == nil {
		return rules.FiringRecord{}, false, nil
	}
	return r.fs.FiringState(ctx, key)
}

// FiringStates reads the states one by one: a dry run reads few.
func (r readOnly) FiringStates(ctx context.Context, rule string, ids []int64) (map[int64]rules.FiringRecord, error) {
	out := make(map[int64]rules.FiringRecord, len(ids))
	for _, id := range ids {
		rec, ok, err := r.FiringState(ctx, rules.FiringKey{Rule: rule, TicketID: id})
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = rec
		}
	}
	return out, nil
}

// ReadView reads what the ledger says of a cycle's decisions, before
// planning: the firings under way, and the states of the decisions'
// (rule, ticket) and theirs, one statement per rule (a rule still matching
// thousands of tickets it already fired on would otherwise cost one
// ledger transaction per ticket every cycle). A rule whose batch read
// fails is read ticket by ticket; a state that cannot be read is left
// out, for Claim to decide.
func ReadView(ctx context.Context, ledger Ledger, set *rules.Set, decisions []rules.Decision, log *slog.Logger) plan.LedgerView {
	var v plan.LedgerView
	begun, err := ledger.BegunFirings(ctx)
	if err != nil {
		log.Warn("read the firings under way; they are finished next cycle", slog.Any("error", err))
	} else {
		v.Begun = begun
	}
	byRule := map[string][]int64{}
	for _, d := range decisions {
		if d.Err == nil {
			byRule[d.Rule] = append(byRule[d.Rule], d.TicketID)
		}
	}
	for rule, ids := range v.Begun {
		if set.Rule(rule) != nil {
			byRule[rule] = append(byRule[rule], ids...)
		}
	}
	v.States = make(map[string]map[int64]rules.FiringRecord, len(byRule))
	for rule, ids := range byRule {
		states, err := ledger.FiringStates(ctx, rule, ids)
		if err != nil {
			log.Warn("read firing states", slog.String("rule", rule), slog.Any("error", err))
			states = statesOneByOne(ctx, ledger, rule, ids, log)
		}
		v.States[rule] = states
	}
	return v
}

// statesOneByOne reads the states of rule's tickets one at a time,
// leaving out those it cannot read.
func statesOneByOne(ctx context.Context, ledger Ledger, rule string, ids []int64, log *slog.Logger) map[int64]rules.FiringRecord {
	out := map[int64]rules.FiringRecord{}
	for _, id := range ids {
		rec, found, err := ledger.FiringState(ctx, rules.FiringKey{Rule: rule, TicketID: id})
		if err != nil {
			log.Warn("read firing state", slog.String("rule", rule), slog.Int64("ticket", id), slog.Any("error", err))
			continue
		}
		if found {
			out[id] = rec
		}
	}
	return out
}
