package cycle

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
func (r *Runner) reconcile(ctx context.Context, c run, p *plan.Plan, synced *feed.Synced, tickets []*sdclient.Ticket, done outcomes) []Result {
	ends := &firing.Episodes{Ledger: r.d.Ledger, Set: c.Set, Now: c.Now, Log: c.Log, Reads: done.Reads, Source: r.source(c),
		InMirror: make(map[int64]bool, len(tickets)), Gone: r.d.Feed.Gone, MaxChecks: r.d.MaxEndChecks,
		Metrics: r.d.Metrics.Exec}
	for _, t := range tickets {
		ends.InMirror[t.ID] = true
	}
	out := make([]Result, 0, len(c.in.Jobs))
	for _, j := range c.in.Jobs {
		res := Result{Job: j.Name, Rules: names(j.Rules), Complete: synced.Complete, Err: synced.Err, Tickets: len(tickets), Sync: synced}
		for _, rule := range j.Rules {
			res.Decisions += len(p.Matching[rule.Name])
		}
		if synced.Complete && !r.d.DryRun {
			var err error
			if res.Ended, res.Kept, err = ends.EndAll(ctx, j.Rules, p.Matching); err != nil {
				res.Complete, res.Err = false, errors.Join(res.Err, err)
			}
		}
		out = append(out, res)
	}
	return out
}
