package firing

import (
	"context"
	"maps"
	"sync"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/store"
)

// RuleRunReader reads when each rule last ran (*store.Store implements it).
type RuleRunReader interface {
	// RuleRuns returns the record of every rule that has one, by name.
	RuleRuns(ctx context.Context) (map[string]store.RuleRun, error)
}

// RuleRuns keeps when each rule last ran, so that restarts, reloads and
// new leaders carry the schedules on (*store.Store implements it;
// store/storetest checks it on SQLite and PostgreSQL).
type RuleRuns interface {
	RuleRunReader
	// SetRuleRuns records runs: under the recorded schedule, Since stays
	// the first and LastRun only moves forward; under another schedule a
	// run replaces the record (plan.MergeRun).
	SetRuleRuns(ctx context.Context, runs ...store.RuleRun) error
}

// RuleRunsFor is where the rules' runs are kept: r, else the ledger when
// it keeps them too, else memory (a restart then starts every schedule
// afresh). A dry run reads them and writes to memory only, as it claims
// nothing in the ledger (ReadOnlyLedger).
func RuleRunsFor(r RuleRuns, ledger any, dry bool) RuleRuns {
	if r == nil {
		r, _ = ledger.(RuleRuns)
	}
	if r == nil {
		return &memRuleRuns{}
	}
	if dry {
		return &memRuleRuns{base: r}
	}
	return r
}

// memRuleRuns keeps runs in memory, over the records of base (nil: none).
type memRuleRuns struct {
	base RuleRunReader
	mu   sync.Mutex
	runs map[string]store.RuleRun
}

func (m *memRuleRuns) RuleRuns(ctx context.Context) (map[string]store.RuleRun, error) {
	out := map[string]store.RuleRun{}
	if m.base != nil {
		base, err := m.base.RuleRuns(ctx)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, base)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, r := range m.runs {
		if old, ok := out[name]; ok {
			r = plan.MergeRun(old, r)
		}
		out[name] = r
	}
	return out, nil
}

func (m *memRuleRuns) SetRuleRuns(_ context.Context, runs ...store.RuleRun) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string]store.RuleRun{}
	}
	for _, r := range runs {
		if old, ok := m.runs[r.Rule]; ok {
			r = plan.MergeRun(old, r)
		}
		m.runs[r.Rule] = r
	}
	return nil
}
