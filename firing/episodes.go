package firing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// Episodes ends the episodes of rules on the tickets that no longer
// match, after a complete sync: the mirror then holds every open ticket
// as fresh as the feed, so a mirrored ticket that does not match has left
// the rule. A ticket with an open episode that the mirror does not hold
// at all (a full sync's paging skipped it, or the episode predates the
// mirror) is re-read first (see End). One Episodes serves one cycle.
type Episodes struct {
	Ledger   Ledger
	Set      *rules.Set
	Now      time.Time
	Log      *slog.Logger
	Reads    *Rereads       // the cycle's re-reads
	Source   Source         // where re-reads read
	InMirror map[int64]bool // the tickets the mirror held when the rules were evaluated
	// Gone reports whether the mirror dropped a ticket because the desk
	// deleted it, marked it as spam or no longer has it.
	Gone func(id int64) bool
	// MaxChecks bounds the re-reads spent confirming ends in the cycle;
	// the episodes beyond wait for a later one.
	MaxChecks int
	// Metrics counts the episodes ended and how each ticket's end check
	// came out: "ended", "still_matching", "deferred", "error".
	Metrics Metrics

	checks int
}

// EndAll ends the open episodes of the rules rs on the tickets not in
// matching (by rule; see End), and returns the totals and every rule's
// error.
func (e *Episodes) EndAll(ctx context.Context, rs []*rules.Rule, matching map[string][]int64) (ended, kept int, err error) {
	var errs []error
	for _, r := range rs {
		n, k, err := e.End(ctx, r, matching[r.Name])
		ended, kept, errs = ended+n, kept+k, append(errs, err)
		if n > 0 {
			e.Metrics.EpisodesEnded.WithLabelValues(r.Name).Add(float64(n))
			e.Log.Debug("episodes ended", slog.String("rule", r.Name), slog.Int("count", n))
		}
	}
	return ended, kept, errors.Join(errs...)
}

// End ends the open episodes of r on the tickets not in matching (the
// tickets r decided on; a decision whose if failed counts as matching:
// never end on an error), and returns how many it ended and how many it
// kept open although the mirror did not show them matching.
func (e *Episodes) End(ctx context.Context, r *rules.Rule, matching []int64) (ended, kept int, err error) {
	stay, err := e.confirm(ctx, r, matching)
	if err != nil {
		return 0, 0, fmt.Errorf("end episodes of rule %q: %w", r.Name, err)
	}
	n, err := e.Ledger.EndEpisodes(ctx, r.Name, append(slices.Clone(matching), stay...), e.Now)
	if err != nil {
		return 0, len(stay), fmt.Errorf("end episodes of rule %q: %w", r.Name, err)
	}
	return n, len(stay), nil
}

// confirm returns the tickets whose open episode of r must stay open
// although the mirror does not show them matching: tickets absent from the
// mirror that a re-read shows still matching (they are put back into the
// mirror), and those that could not be re-read in this cycle. A ticket the
// desk deleted, marked as spam or answered 404 for ends without a re-read;
// one the mirror holds needs none. At most MaxChecks re-reads are spent
// per cycle.
func (e *Episodes) confirm(ctx context.Context, r *rules.Rule, matching []int64) ([]int64, error) {
	open, err := e.Ledger.OpenEpisodes(ctx, r.Name)
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
		e.Metrics.EndChecks.WithLabelValues(r.Name, o).Inc()
		if o != "ended" {
			stay = append(stay, id)
		}
	}
	for _, id := range open {
		if in[id] || e.InMirror[id] || e.Gone(id) {
			continue
		}
		if !e.Reads.Has(id) {
			if e.checks >= e.MaxChecks {
				deferred++
				outcome(id, "deferred")
				continue
			}
			e.checks++
		}
		outcome(id, e.check(ctx, r, id))
	}
	if deferred > 0 {
		e.Log.Info("episode ends left for a later cycle: the re-reads of this cycle are spent",
			slog.String("rule", r.Name), slog.Int("deferred", deferred), slog.Int("max_end_checks", e.MaxChecks))
	}
	return stay, nil
}

// check re-reads ticket id, absent from the mirror, and says whether its
// episode of r ends.
func (e *Episodes) check(ctx context.Context, r *rules.Rule, id int64) string {
	t, err := e.Reads.Get(ctx, e.Source, id)
	switch {
	case Waiting(err):
		e.Log.Info("waiting for the request budget to confirm that a ticket left a rule; its episode stays open", slog.String("rule", r.Name),
			slog.Int64("ticket", id), slog.Any("error", err))
		return "deferred"
	case err != nil:
		e.Log.Warn("cannot confirm that a ticket left a rule; its episode stays open", slog.String("rule", r.Name),
			slog.Int64("ticket", id), slog.Any("error", err))
		return "error"
	case t == nil:
		return "ended" // deleted
	case len(e.Set.EvaluateRule(r, []*sdclient.Ticket{t}, e.Now)) > 0:
		e.Log.Info("a ticket missing from the mirror still matches; its episode stays open", slog.String("rule", r.Name),
			slog.Int64("ticket", id))
		return "still_matching"
	}
	return "ended"
}
