package firing

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/rules"
)

// overBudget is what the last cycle of a rule that went over its run-time
// budget left for /readyz.
type overBudget struct {
	tickets int
	example int64 // one ticket it happened on
	err     string
	at      time.Time
}

// Budgets remembers the rules over their run-time budget (rules.ErrBudget):
// they are reported, not stopped, and do not act on those tickets. Its
// zero value is ready; it is safe for concurrent use.
type Budgets struct {
	mu    sync.Mutex
	rules map[string]overBudget
}

// Note counts (in over, by rule), logs (once a rule and cycle, not once a
// ticket) and remembers the decisions of a cycle's rules that went over
// their run-time budget; the other rules are unaffected. A due rule that
// stayed within its budget this cycle is forgotten.
func (b *Budgets) Note(due []*rules.Rule, decisions []rules.Decision, now time.Time, over *prometheus.CounterVec, log *slog.Logger) {
	cycle := map[string]overBudget{}
	for _, d := range decisions {
		if d.Err == nil || !errors.Is(d.Err, rules.ErrBudget) {
			continue
		}
		o := cycle[d.Rule]
		if o.tickets == 0 {
			o.example, o.err, o.at = d.TicketID, d.Err.Error(), now
		}
		o.tickets++
		cycle[d.Rule] = o
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rules == nil {
		b.rules = map[string]overBudget{}
	}
	for _, r := range due {
		o, ok := cycle[r.Name]
		if !ok {
			delete(b.rules, r.Name)
			continue
		}
		b.rules[r.Name] = o
		over.WithLabelValues(r.Name).Add(float64(o.tickets))
		log.Error("rule went over its run-time budget; it does not act on those tickets, the other rules run on",
			slog.String("rule", r.Name), slog.Int("tickets", o.tickets), slog.Int64("example_ticket", o.example),
			slog.String("error", o.err))
	}
}

// Health is the rules' part of /readyz: nil, or which rules went over
// their run-time budget in their last cycle.
func (b *Budgets) Health() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.rules) == 0 {
		return nil
	}
	names := make([]string, 0, len(b.rules))
	for n := range b.rules {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		o := b.rules[n]
		parts[i] = fmt.Sprintf("rule %q went over its run-time budget on %d tickets (e.g. #%d) at %s", n, o.tickets, o.example, o.at.UTC().Format(time.TimeOnly))
	}
	return errors.New(strings.Join(parts, "; "))
}

// Over says, per rule over its run-time budget in its last cycle, why
// (for the status pages).
func (b *Budgets) Over() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.rules))
	for n, o := range b.rules {
		out[n] = fmt.Sprintf("over its run-time budget on %d tickets (e.g. #%d) at %s: %s", o.tickets, o.example, o.at.UTC().Format(time.TimeOnly), o.err)
	}
	return out
}
