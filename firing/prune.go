package firing

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Prune deletes from ledger the finished firings older than retention at
// now that are no longer the current one of their (rule, ticket), and
// returns how many went (counted in pruned, logged when any). Without
// pruning the ledger grows by one row per firing for ever (every
// `once: every` repeat, every episode).
func Prune(ctx context.Context, ledger Ledger, retention time.Duration, now time.Time, pruned prometheus.Counter, log *slog.Logger) (int, error) {
	before := now.Add(-retention)
	n, err := ledger.PruneFirings(ctx, before)
	if err != nil {
		return n, fmt.Errorf("prune ledger: %w", err)
	}
	pruned.Add(float64(n))
	if n > 0 {
		log.Info("ledger pruned", slog.Int("firings", n), slog.Time("before", before))
	}
	return n, nil
}
