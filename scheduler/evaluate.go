package scheduler

import (
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// evaluate is the pure step of a cycle: the due rules of set over the
// mirrored tickets at now, each rule's query checked locally with the
// filter language the desk uses, then its if. Each ticket's expression
// environment is built once and shared by the rules. No I/O.
func evaluate(set *rules.Set, due []*rules.Rule, tickets []*sdclient.Ticket, now time.Time) []rules.Decision {
	if len(due) == 0 {
		return nil
	}
	return set.EvaluateRules(due, tickets, now)
}
