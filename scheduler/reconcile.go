package scheduler

import (
	"context"
	"errors"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/sdclient"
)

// reconcile is the step that ends episodes, after the firings: each due
// job's result, and, after a complete sync (synced), the episodes of its
// rules on the tickets that no longer match ended (firing.Episodes; a
// dry run ends none). It re-reads through the execute step's re-reads
// (done), so no ticket is read twice a cycle.
func (s *Scheduler) reconcile(ctx context.Context, cy *cycle, due []*job, p *plan.Plan, synced *feed.Synced, tickets []*sdclient.Ticket, done outcomes) []CycleResult {
	ends := &firing.Episodes{Ledger: s.ledger, Set: cy.set, Now: cy.now, Log: cy.log, Reads: done.Reads, Source: s.source(cy),
		InMirror: make(map[int64]bool, len(tickets)), Gone: s.feed.Gone, MaxChecks: s.cfg.maxEndChecks,
		Metrics: s.m.exec}
	for _, t := range tickets {
		ends.InMirror[t.ID] = true
	}
	out := make([]CycleResult, 0, len(due))
	for _, j := range due {
		res := CycleResult{Job: j.name, Rules: j.ruleNames(), Complete: synced.Complete, Err: synced.Err, Tickets: len(tickets), Sync: synced}
		for _, r := range j.Rules {
			res.Decisions += len(p.Matching[r.Name])
		}
		if synced.Complete && !s.cfg.dryRun {
			var err error
			if res.Ended, res.Kept, err = ends.EndAll(ctx, j.Rules, p.Matching); err != nil {
				res.Complete, res.Err = false, errors.Join(res.Err, err)
			}
		}
		out = append(out, res)
	}
	return out
}
