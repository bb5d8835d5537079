package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// reconcile ends the episodes of j's rules on the tickets that no longer
// match. Call it only after a complete sync: the mirror then holds every
// open ticket as fresh as the feed, so a mirrored ticket that does not
// match has left the rule. A decision whose if failed counts as matching
// (never end on an error). A ticket with an open episode that the mirror
// does not hold at all (a full sync's paging skipped it, or the episode
// predates the mirror) is re-read first; see confirmEnds.
func (s *Scheduler) reconcile(ctx context.Context, cy *cycle, j *job, byRule map[string][]rules.Decision, res *CycleResult) {
	for _, r := range j.rules {
		ds := byRule[r.Name]
		matching := make([]int64, 0, len(ds))
		for _, d := range ds {
			matching = append(matching, d.TicketID)
		}
		stay, err := s.confirmEnds(ctx, cy, r, matching)
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
func (s *Scheduler) confirmEnds(ctx context.Context, cy *cycle, r *rules.Rule, matching []int64) ([]int64, error) {
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
		if in[id] || cy.inMirror[id] || s.isGone(id) {
			continue
		}
		_, cached := cy.fresh[id]
		if !cached && !cy.gone[id] {
			if cy.endChecks >= s.cfg.maxEndChecks {
				deferred++
				outcome(id, "deferred")
				continue
			}
			cy.endChecks++
		}
		t, err := s.reread(ctx, cy, id)
		switch {
		case waiting(err):
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
func (s *Scheduler) isGone(id int64) bool { return s.feed.Gone(id) }
