package scheduler

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// evalChunk is how many tickets are evaluated between two looks at ctx.
// An expression may take up to rules.MaxSteps loop steps per ticket (a
// few milliseconds), so a shutdown waits for one chunk at most, not for
// the whole mirror.
const evalChunk = 32

// evaluate is the pure step of a cycle: the due rules of set over the
// mirrored tickets at now, each rule's query checked locally with the
// filter language the desk uses, then its if. Each ticket's expression
// environment is built once and shared by the rules. No I/O; it stops
// early with ctx's error when ctx ends.
func evaluate(ctx context.Context, set *rules.Set, due []*rules.Rule, tickets []*sdclient.Ticket, now time.Time) ([]rules.Decision, error) {
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
