package firing

import (
	"context"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

// OutlookLedger is what PlanOutlook reads of the ledger.
type OutlookLedger interface {
	OpenEpisodes(ctx context.Context, rule string) ([]int64, error)
	FiringStates(ctx context.Context, rule string, ticketIDs []int64) (map[int64]rules.FiringRecord, error)
}

// OutlookInput is what PlanOutlook starts from.
type OutlookInput struct {
	Set       *rules.Set
	Now       time.Time
	Tick      time.Duration
	CycleCap  int
	Runs      map[string]store.RuleRun // each rule's last run
	Decisions []rules.Decision         // each rule's last evaluation's, in set's order
	Ledger    OutlookLedger
	// WaitingSince is since when earlier cycles left each decision
	// waiting (plan.WaitingSince).
	WaitingSince func([]rules.Decision) map[rules.FiringKey]time.Time
}

// PlanOutlook is what `deskbot rules plan` shows: each rule's decisions at
// its last evaluation, less those the ledger shows fired already (as a
// claim would see them now), in the queue's order, split into cycles by
// the caps, each rule at its next run (plan.NextRun). It neither asks the
// desk nor evaluates a rule.
func PlanOutlook(ctx context.Context, in OutlookInput) (plan.Outlook, error) {
	set, now := in.Set, in.Now
	next := make(map[string]time.Time, len(set.Rules()))
	for _, r := range set.Rules() {
		rec, ok := in.Runs[r.Name]
		next[r.Name] = plan.Later(plan.NextRun(r, rec, ok, now), now)
	}
	fired, err := ledgerFired(ctx, in.Ledger, set, in.Decisions, next)
	if err != nil {
		return plan.Outlook{}, fmt.Errorf("plan outlook: %w", err)
	}
	// The queue's order, as a cycle admits them; the fired and the failed
	// only count, so they need none.
	fires, counted := make([]rules.Decision, 0, len(in.Decisions)), make([]rules.Decision, 0, len(in.Decisions))
	for _, d := range in.Decisions {
		if d.Err != nil || fired[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] {
			counted = append(counted, d)
		} else {
			fires = append(fires, d)
		}
	}
	decisions := append(plan.Order(set, now, fires, nil, in.WaitingSince(fires)), counted...)
	return plan.NewOutlook(now, in.Tick, in.CycleCap, set, set.Rules(), decisions, next, func(d rules.Decision) bool {
		return fired[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}]
	}), nil
}

// ledgerFired is what the ledger shows fired of decisions, one read per
// rule, each rule's record judged at its next run.
func ledgerFired(ctx context.Context, ledger OutlookLedger, set *rules.Set, decisions []rules.Decision, next map[string]time.Time) (map[rules.FiringKey]bool, error) {
	fired := map[rules.FiringKey]bool{}
	ids := map[string][]int64{}
	for _, d := range decisions {
		if d.Err == nil {
			ids[d.Rule] = append(ids[d.Rule], d.TicketID)
		}
	}
	for _, r := range set.Rules() {
		if len(ids[r.Name]) == 0 {
			continue
		}
		if r.Once.Mode == rules.OnceEpisode {
			// An open episode has fired (a page must stay quick at
			// thousands of matches: one column, not the records; a
			// firing left pending by a crash counts as fired here).
			open, err := ledger.OpenEpisodes(ctx, r.Name)
			if err != nil {
				return nil, err
			}
			for _, id := range open {
				fired[rules.FiringKey{Rule: r.Name, TicketID: id}] = true
			}
			continue
		}
		recs, err := ledger.FiringStates(ctx, r.Name, ids[r.Name])
		if err != nil {
			return nil, err
		}
		for id, rec := range recs {
			if !r.Once.MayFire(rec, next[r.Name]) {
				fired[rules.FiringKey{Rule: r.Name, TicketID: id}] = true
			}
		}
	}
	return fired, nil
}
