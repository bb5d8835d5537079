package backtest

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// TestPlanOverPrefix checks the fact the incremental queue rests on
// (queue.go): plan.Make over any prefix of its own order that holds every
// decision it admitted admits the same decisions, in the same order.
func TestPlanOverPrefix(t *testing.T) {
	set := load(t, `  - name: pages
    query: "status:open"
    priority: high
    max_firings_per_cycle: 3
    actions:
      - note: "x"
  - name: alerts
    query: "status:open"
    max_firings_per_cycle: 5
    actions:
      - alert: {channel: desk, text: "x"}
  - name: notes
    query: "status:open"
    max_firings_per_cycle: 2
    actions:
      - note: "x"
  - name: replies
    query: "status:open"
    actions:
      - reply: "x"
`)
	now := t0.Add(48 * time.Hour)
	failed := errors.New("failed")
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var ds []rules.Decision
		since := map[rules.FiringKey]time.Time{}
		for _, r := range set.Rules() {
			for id := range int64(1 + rng.IntN(40)) {
				tkt := tk(1+id*3+int64(rng.IntN(3)), 2, 1+rng.IntN(4), 0, t0.Add(time.Duration(rng.IntN(100))*time.Hour))
				d := rules.Decision{Rule: r.Name, Once: r.Once, TicketID: tkt.ID, Ticket: tkt}
				if rng.IntN(8) == 0 {
					d.Err = failed
				}
				if rng.IntN(2) == 0 {
					since[plan.Key(d)] = now.Add(-time.Duration(rng.IntN(20)) * time.Minute)
				}
				ds = append(ds, d)
			}
		}
		ds = uniqueDecisions(ds)
		cycleCap := rng.IntN(16)
		full := plan.Make(plan.Input{Set: set, Now: now, Decisions: ds, Since: since, CycleCap: cycleCap, Groups: true})
		last := -1
		for i, d := range full.Ordered {
			if full.Admitted[plan.Key(d)] {
				last = i
			}
		}
		k := last + 1 + rng.IntN(len(full.Ordered)-last)
		prefix := slices.Clone(full.Ordered[:k]) // Make sorts its input in place
		part := plan.Make(plan.Input{Set: set, Now: now, Decisions: prefix, Since: since, CycleCap: cycleCap, Groups: true})
		if !maps.Equal(part.Admitted, full.Admitted) {
			t.Fatalf("seed %d: over the first %d of %d decisions plan admits %v, over all %v", seed, k, len(ds), part.Admitted, full.Admitted)
		}
		for i, d := range part.Ordered {
			if plan.Key(d) != plan.Key(full.Ordered[i]) {
				t.Fatalf("seed %d: place %d is %v over the prefix, %v over all", seed, i, plan.Key(d), plan.Key(full.Ordered[i]))
			}
		}
	}
}

// uniqueDecisions drops repeated (rule, ticket) pairs.
func uniqueDecisions(ds []rules.Decision) []rules.Decision {
	seen := map[rules.FiringKey]bool{}
	out := ds[:0]
	for _, d := range ds {
		if !seen[plan.Key(d)] {
			seen[plan.Key(d)] = true
			out = append(out, d)
		}
	}
	return out
}
