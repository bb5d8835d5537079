package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// reconcile is the step that ends episodes, after the firings: each due
// job's result, and, after a complete sync (synced), the episodes of its
// rules on the tickets that no longer match ended (endEpisodes). The
// mirror then holds every open ticket as fresh as the feed, so a mirrored
// ticket that does not match has left the rule. It re-reads through the
// execute step's re-reads (done), so no ticket is read twice a cycle.
func (s *Scheduler) reconcile(ctx context.Context, cy *cycle, due []*job, p *plan.Plan, synced *SyncResult, tickets []*sdclient.Ticket, done outcomes) []CycleResult {
	ends := &episodeEnds{cy: cy, reads: done.reads, inMirror: make(map[int64]bool, len(tickets))}
	for _, t := range tickets {
		ends.inMirror[t.ID] = true
	}
	out := make([]CycleResult, 0, len(due))
	for _, j := range due {
		res := CycleResult{Job: j.name, Rules: j.ruleNames(), Complete: synced.Complete, Err: synced.Err, Tickets: len(tickets), Sync: synced}
		for _, r := range j.rules {
			res.Decisions += len(p.Matching[r.Name])
		}
		if synced.Complete && !s.cfg.dryRun {
			s.endEpisodes(ctx, ends, j, p.Matching, &res)
		}
		out = append(out, res)
	}
	return out
}

// episodeEnds is what reconcile needs to confirm episode ends in a cycle.
type episodeEnds struct {
	cy       *cycle
	reads    *firing.Rereads
	inMirror map[int64]bool // tickets the mirror held when evaluated
	checks   int            // re-reads spent confirming episode ends (see confirmEnds)
}

// endEpisodes ends the episodes of j's rules on the tickets that no longer
// match: matching are the tickets each rule decided on; a decision whose
// if failed counts as matching (never end on an error). A ticket with an
// open episode that the mirror does not hold at all (a full sync's paging
// skipped it, or the episode predates the mirror) is re-read first; see
// confirmEnds.
func (s *Scheduler) endEpisodes(ctx context.Context, ends *episodeEnds, j *job, byRule map[string][]int64, res *CycleResult) {
	cy := ends.cy
	for _, r := range j.rules {
		matching := slices.Clone(byRule[r.Name])
		stay, err := s.confirmEnds(ctx, ends, r, matching)
		if err != nil {
			res.Complete = false
			res.Err = errors.Join(res.Err, fmt.Errorf("end episodes of rule %q: %w", r.Name, err))
			continue
		}
		res.Kept += len(stay)
		n, err := s.ledger.EndEpisodes(ctx, r.Name, append(matching, stay...), cy.now)
		if err != nil {
			res.Complete = false
			res.Err = errors.Join(res.Err, fmt.Errorf("end episodes of rule %q: %w", r.Name, err))
			continue
		}
		res.Ended += n
		if n > 0 {
			s.m.episodesEnded.WithLabelValues(r.Name).Add(float64(n))
			cy.log.Debug("episodes ended", slog.String("rule", r.Name), slog.Int("count", n))
		}
	}
}

// confirmEnds returns the tickets whose open episode of r must stay open
// although the mirror does not show them matching: tickets absent from the
// mirror that a re-read shows still matching (they are put back into the
// mirror), and those that could not be re-read in this cycle. A ticket the
// desk deleted, marked as spam or answered 404 for ends without a re-read;
// one the mirror holds needs none. At most maxEndChecks re-reads are spent
// per cycle; the episodes beyond wait for a later one.
func (s *Scheduler) confirmEnds(ctx context.Context, ends *episodeEnds, r *rules.Rule, matching []int64) ([]int64, error) {
	cy := ends.cy
	open, err := s.ledger.OpenEpisodes(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	in := make(map[int64]bool, len(matching))
	for _, id := range matching {
		in[id] = true
	}
	var stay []int64
	deferred := 0
	outcome := func(id int64, o string) {
		s.m.endChecks.WithLabelValues(r.Name, o).Inc()
		if o != "ended" {
			stay = append(stay, id)
		}
	}
	for _, id := range open {
		if in[id] || ends.inMirror[id] || s.isGone(id) {
			continue
		}
		if !ends.reads.Has(id) {
			if ends.checks >= s.cfg.maxEndChecks {
				deferred++
				outcome(id, "deferred")
				continue
			}
			ends.checks++
		}
		t, err := s.reread(ctx, cy, ends.reads, id)
		switch {
		case firing.Waiting(err):
			cy.log.Info("waiting for the request budget to confirm that a ticket left a rule; its episode stays open", slog.String("rule", r.Name),
				slog.Int64("ticket", id), slog.Any("error", err))
			outcome(id, "deferred")
		case err != nil:
			cy.log.Warn("cannot confirm that a ticket left a rule; its episode stays open", slog.String("rule", r.Name),
				slog.Int64("ticket", id), slog.Any("error", err))
			outcome(id, "error")
		case t == nil:
			outcome(id, "ended") // deleted
		case len(cy.set.EvaluateRule(r, []*sdclient.Ticket{t}, cy.now)) > 0:
			cy.log.Info("a ticket missing from the mirror still matches; its episode stays open", slog.String("rule", r.Name),
				slog.Int64("ticket", id))
			outcome(id, "still_matching")
		default:
			outcome(id, "ended")
		}
	}
	if deferred > 0 {
		cy.log.Info("episode ends left for a later cycle: the re-reads of this cycle are spent",
			slog.String("rule", r.Name), slog.Int("deferred", deferred), slog.Int("max_end_checks", s.cfg.maxEndChecks))
	}
	return stay, nil
}

// isGone reports whether the mirror dropped ticket id because the desk
// deleted it, marked it as spam or no longer has it.
func (s *Scheduler) isGone(id int64) bool {
	for _, m := range s.mirrors {
		m.mu.Lock()
		g := m.gone[id]
		m.mu.Unlock()
		if g {
			return true
		}
	}
	return false
}
