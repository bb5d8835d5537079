package plan

import (
	"context"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// evalChunk is how many tickets are evaluated between two looks at ctx.
// An expression may take up to rules.MaxSteps loop steps per ticket (a
// few milliseconds), so a shutdown waits for one chunk at most, not for
// the whole mirror.
const evalChunk = 32

// Evaluate is the pure step of a cycle: the due rules of set over the
// mirrored tickets at now, each rule's query checked locally with the
// filter language the desk uses, then its if. Each ticket's expression
// environment is built once and shared by the rules. No I/O; it stops
// early with ctx's error when ctx ends.
func Evaluate(ctx context.Context, set *rules.Set, due []*rules.Rule, tickets []*sdclient.Ticket, now time.Time) ([]rules.Decision, error) {
	if len(due) == 0 {
		return nil, nil
	}
	var out []rules.Decision
	for start := 0; start < len(tickets); start += evalChunk {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out = append(out, set.EvaluateRules(due, tickets[start:min(start+evalChunk, len(tickets))], now)...)
	}
	return out, nil
}

// SortDecisions orders decisions by ticket, then by the rules' file order.
func SortDecisions(set *rules.Set, ds []rules.Decision) {
	order := map[string]int{}
	for i, r := range set.Rules() {
		order[r.Name] = i
	}
	slices.SortStableFunc(ds, func(a, b rules.Decision) int {
		if a.TicketID != b.TicketID {
			if a.TicketID < b.TicketID {
				return -1
			}
			return 1
		}
		return order[a.Rule] - order[b.Rule]
	})
}

// Key is d's (rule, ticket).
func Key(d rules.Decision) rules.FiringKey {
	return rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}
}
