package statuspage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Mirror is the ticket mirror as people's commands read it
// (*feed.LiveMirror implements it): the leader's memory, else the
// store. A rule's page evaluates the rule over it when asked.
type Mirror interface {
	MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error)
	MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error)
}

// WithMirror makes a rule's page list the tickets that match it now,
// evaluated over m when the page is asked for (without it: the tickets
// the rule's last run matched).
func WithMirror(m Mirror) Option { return func(c *config) { c.mirror = m } }

// evalChunk is how many tickets are evaluated between two looks at the
// request's context.
const evalChunk = 256

// matchingNow evaluates rule r of v's rules over the whole mirror at v.At,
// as a cycle would (the query, then the if): the tickets it matches, those
// it fails on with why, every mirrored ticket by id, and how many it read.
// No desk request: the mirror is memory (or the store).
func (h *Handler) matchingNow(ctx context.Context, v statusView, r *rules.Rule) (plan.RuleMatches, map[int64]*sdclient.Ticket, int, error) {
	states, err := h.cfg.mirror.MirrorStates(ctx)
	if err != nil {
		return plan.RuleMatches{}, nil, 0, fmt.Errorf("read the mirror: %w", err)
	}
	var tickets []*sdclient.Ticket
	for _, ws := range slices.Sorted(maps.Keys(states)) {
		ts, _, err := h.cfg.mirror.MirrorLoad(ctx, ws)
		if err != nil {
			return plan.RuleMatches{}, nil, 0, fmt.Errorf("read the mirror of workspace %d: %w", ws, err)
		}
		tickets = append(tickets, ts...)
	}
	m := plan.RuleMatches{At: v.At}
	byID := map[int64]*sdclient.Ticket{}
	due := []*rules.Rule{r}
	for start := 0; start < len(tickets); start += evalChunk {
		if err := ctx.Err(); err != nil {
			return plan.RuleMatches{}, nil, 0, err
		}
		for _, d := range v.Set.EvaluateRules(due, tickets[start:min(start+evalChunk, len(tickets))], v.At) {
			byID[d.TicketID] = d.Ticket
			if d.Err != nil {
				if m.Failed == nil {
					m.Failed = map[int64]string{}
				}
				m.Failed[d.TicketID] = d.Err.Error()
				continue
			}
			m.Tickets = append(m.Tickets, d.TicketID)
		}
	}
	slices.Sort(m.Tickets)
	return m, byID, len(tickets), nil
}

// matchedWhen says when a matching list was taken: now, over the mirror, or
// at the rule's last run.
func matchedWhen(now bool, n int, at time.Time) string {
	if now {
		return fmt.Sprintf("evaluated now over the %d mirrored tickets", n)
	}
	return "at its last run (" + stamp(at) + ")"
}
