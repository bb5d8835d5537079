package scheduler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/sdclient"
)

// reconcile is the step that ends episodes, after the firings: each due
// job's result, and, after a complete sync (synced), the episodes of its
// rules on the tickets that no longer match ended (firing.Episodes; a
// dry run ends none). It re-reads through the execute step's re-reads
// (done), so no ticket is read twice a cycle.
func (s *Scheduler) reconcile(ctx context.Context, cy *cycle, due []*job, p *plan.Plan, synced *SyncResult, tickets []*sdclient.Ticket, done outcomes) []CycleResult {
	ends := &firing.Episodes{Ledger: s.ledger, Set: cy.set, Now: cy.now, Log: cy.log, Reads: done.Reads, Source: s.source(cy),
		InMirror: make(map[int64]bool, len(tickets)), Gone: s.feed.Gone, MaxChecks: s.cfg.maxEndChecks,
		Checked: func(rule, outcome string) { s.m.endChecks.WithLabelValues(rule, outcome).Inc() }}
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
			s.endEpisodes(ctx, cy, ends, j, p.Matching, &res)
		}
		out = append(out, res)
	}
	return out
}

// endEpisodes ends the episodes of j's rules on the tickets that no longer
// match (matching: the tickets each rule decided on), noting the counts
// in res and the metrics.
func (s *Scheduler) endEpisodes(ctx context.Context, cy *cycle, ends *firing.Episodes, j *job, matching map[string][]int64, res *CycleResult) {
	for _, r := range j.Rules {
		n, kept, err := ends.End(ctx, r, matching[r.Name])
		res.Kept += kept
		if err != nil {
			res.Complete = false
			res.Err = errors.Join(res.Err, err)
			continue
		}
		res.Ended += n
		if n > 0 {
			s.m.episodesEnded.WithLabelValues(r.Name).Add(float64(n))
			cy.log.Debug("episodes ended", slog.String("rule", r.Name), slog.Int("count", n))
		}
	}
}
