package firing

import (
	"context"
	"testing"
	"time"

	"github.com/deskbot/deskbot/store"
)

// Where the rules' runs are kept: a dry run reads the store's records and
// keeps its own runs in memory, merged over them, never writing the
// store; without a store they live in memory.
func TestRuleRunsFor(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	base := &memRuleRuns{}
	stored := store.RuleRun{Rule: "a", Schedule: "every 5m0s", Since: t0.Add(-time.Hour), LastRun: t0.Add(-time.Minute)}
	if err := base.SetRuleRuns(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if got := RuleRunsFor(base, nil, false); got != base {
		t.Errorf("RuleRunsFor(r, live) = %T, want r itself", got)
	}
	if got := RuleRunsFor(nil, base, false); got != base {
		t.Errorf("RuleRunsFor(nil, a ledger keeping runs) = %T, want the ledger", got)
	}
	dry := RuleRunsFor(base, nil, true)
	if err := dry.SetRuleRuns(ctx, store.RuleRun{Rule: "a", Schedule: stored.Schedule, Since: t0, LastRun: t0},
		store.RuleRun{Rule: "b", Schedule: "cron 0 9 * * *", Since: t0}); err != nil {
		t.Fatal(err)
	}
	runs, err := dry.RuleRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a := runs["a"]; !a.Since.Equal(stored.Since) || !a.LastRun.Equal(t0) || runs["b"].Rule != "b" {
		t.Errorf("dry run's runs = %+v, want a since %v last run %v, and b", runs, stored.Since, t0)
	}
	if own, _ := base.RuleRuns(ctx); len(own) != 1 || !own["a"].LastRun.Equal(stored.LastRun) {
		t.Errorf("the store's runs after a dry run = %+v, want only its own record", own)
	}
	if _, ok := RuleRunsFor(nil, ReadOnlyLedger(nil), false).(*memRuleRuns); !ok {
		t.Error("RuleRunsFor without anything keeping runs: want memory")
	}
}
