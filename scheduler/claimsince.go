package scheduler

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// sinceClaimer is a Ledger that records, with a new firing, when its
// ticket began to match (*store.Store implements it; ledgers that do not
// are claimed with Claim).
type sinceClaimer interface {
	ClaimSince(ctx context.Context, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration, since time.Time) (rules.Firing, error)
}

// claim claims key at now on the ledger, recording since (when the ticket
// began to match the rule) where the ledger keeps it.
func claim(ctx context.Context, l Ledger, key rules.FiringKey, once rules.Once, now time.Time, lease time.Duration, since time.Time) (rules.Firing, error) {
	if c, ok := l.(sinceClaimer); ok {
		return c.ClaimSince(ctx, key, once, now, lease, since)
	}
	return l.Claim(ctx, key, once, now, lease)
}
