package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// WithOutlook makes every dry-run cycle hand its plan.Outlook to f (deskbot
// rules plan). It is called on the cycle's goroutine.
func WithOutlook(f func(plan.Outlook)) Option { return func(cfg *config) { cfg.outlook = f } }

// dryMemory is what earlier dry-run cycles would have fired (see
// plan.DryMemory: a dry run writes nothing to the ledger).
type dryMemory struct {
	mu    sync.Mutex
	fired plan.DryMemory
}

// nextRuns is when each rule of a plan's cycle (RunCycle) first runs, by
// plan.NextRun over the rules' last runs; nil in other cycles, whose rules
// all run now.
func (s *Scheduler) nextRuns(ctx context.Context, cy *cycle) map[string]time.Time {
	if !cy.once {
		return nil
	}
	runs, err := s.runs.RuleRuns(ctx)
	if err != nil {
		cy.log.Warn("cannot read when the rules last ran: the plan takes every rule as new", slog.Any("error", err))
	}
	return plan.NextRuns(cy.rules, runs, cy.now)
}

// dryRun is the execute step of a dry run: it logs, one line per
// decision (in the queue's order), what the cycle would have done ("would
// have ..."), as a real cycle would do it (caps, grouped alerts),
// remembers it for the next dry-run cycles and executes nothing. Its
// outcomes hold back what the caps would have.
func (s *Scheduler) dryRun(ctx context.Context, cy *cycle, decisions []rules.Decision) outcomes {
	s.dry.mu.Lock()
	defer s.dry.mu.Unlock()
	if s.dry.fired == nil {
		s.dry.fired = plan.DryMemory{}
	}
	for _, d := range decisions {
		if d.Err != nil {
			s.noteFailed(cy, d)
		}
	}
	if s.syncComplete() {
		s.dry.fired.EndEpisodes(cy.set, cy.rules, decisions)
	}
	// A plan shows each rule at its first run (plan.NextRun).
	next := s.nextRuns(ctx, cy)
	if next != nil { // else every rule runs now
		ds, err := plan.AtNextRuns(ctx, cy.set, cy.rules, s.mirrorSnapshot(), decisions, next, cy.now)
		if err != nil {
			cy.log.Info("plan stopped while evaluating the rules at their next runs", slog.Any("error", err))
		}
		decisions = ds // on error: the decisions as they were
	}
	o := plan.NewOutlook(cy.now, s.tickEvery(), s.cfg.maxFirings, cy.set, cy.rules, decisions, next, func(d rules.Decision) bool {
		if fired, known := s.dry.fired.Fired(d, cy.now); known {
			return fired
		}
		return s.firedPerLedger(ctx, cy, d)
	})
	for _, line := range o.Lines() {
		cy.log.Info(line.Text, line.Attrs...)
	}
	held := s.dryRemember(cy, o)
	if s.cfg.outlook != nil {
		s.cfg.outlook(o)
	}
	s.postDryRun(ctx, cy, o)
	return outcomes{Outcomes: firing.Outcomes{Held: held, Reads: firing.NewRereads()}}
}

// firedPerLedger reports whether the ledger shows that a Claim of d could
// not win now (as the plan's pre-check); a state it cannot read counts as
// not fired.
func (s *Scheduler) firedPerLedger(ctx context.Context, cy *cycle, d rules.Decision) bool {
	info, found, err := s.ledger.FiringState(ctx, plan.Key(d))
	if err != nil {
		cy.log.Warn("read firing state", slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID), slog.Any("error", err))
		return false // let Claim decide
	}
	return found && !d.Once.MayFire(info, cy.now)
}

// noteFailed counts and logs a decision that failed.
func (s *Scheduler) noteFailed(cy *cycle, d rules.Decision) {
	s.m.decisions.WithLabelValues(d.Rule, "error").Inc()
	if !errors.Is(d.Err, rules.ErrBudget) { // those are logged once a rule and cycle (noteBudgets)
		cy.log.Error("rule failed on ticket", slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID), slog.Any("error", d.Err))
	}
}

// dryRemember notes what the dry-run cycle would have fired now, and
// holds the rest back as a real cycle's caps would (caller holds s.dry.mu).
func (s *Scheduler) dryRemember(cy *cycle, o plan.Outlook) map[string]map[int64]plan.Held {
	fired, deferred, held := s.dry.fired.Remember(o, cy.now)
	for _, d := range fired {
		s.m.decisions.WithLabelValues(d.Rule, "dry_run").Inc()
	}
	for _, d := range deferred {
		s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
	}
	return held
}

// postDryRun posts what the cycle would have done to chat, when the
// notifier can (DryRunPoster).
func (s *Scheduler) postDryRun(ctx context.Context, cy *cycle, o plan.Outlook) {
	p, ok := s.notifier.(DryRunPoster)
	if !ok {
		return
	}
	ch, text := o.ChatSummary(cy.set, dryRunChatLines)
	if text == "" {
		return
	}
	actx, cancel := s.actionContext(ctx)
	defer cancel()
	if err := p.PostDryRun(actx, ch, text); err != nil {
		cy.log.Warn("dry run: cannot post what the cycle would have done to chat", slog.String("channel", ch), slog.Any("error", err))
	}
}

// DryRunPoster is optionally implemented by a Notifier that posts plain
// text to a channel. In a dry run, each cycle that would have done
// something posts one message there saying what ("would have ..."), at
// most dryRunChatLines lines and "and N more".
type DryRunPoster interface {
	// PostDryRun posts text to channel.
	PostDryRun(ctx context.Context, channel, text string) error
}

// dryRunChatLines bounds a dry run's chat message.
const dryRunChatLines = 10

// syncComplete reports whether the cycle's mirror holds every open ticket
// (a ticket's absence from the decisions then means it no longer matches).
func (s *Scheduler) syncComplete() bool { return s.feed.Complete() }

// PlanDrain is plan.Outlook.Drain for the outlook o of a plan's cycle c (a
// dry-run RunCycle, `deskbot rules plan`) polling workspaces: a change
// feed request per workspace a cycle, and in the first cycle the read of
// the open statuses and the full sync c made.
func PlanDrain(o plan.Outlook, c Cycle, budget, workspaces int) plan.Drain {
	first := 1
	if c.Sync != nil {
		first += c.Sync.FullSyncRequests
	}
	return o.Drain(budget, max(1, workspaces), first)
}
