package firing

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// DryRun is the execute step of a dry run: it logs, one line per decision
// (in the queue's order), what the cycle would have done ("would have
// ..."), as a real cycle would do it (caps, grouped alerts), remembers it
// for the next dry-run cycles (plan.DryMemory: a dry run writes nothing to
// the ledger) and executes nothing. The zero value is ready; one DryRun
// serves all the cycles of a scheduler.
type DryRun struct {
	mu    sync.Mutex
	fired plan.DryMemory
}

// DryCycle is what one dry-run cycle hands DryRun.Run.
type DryCycle struct {
	Cycle
	Decisions []rules.Decision // the plan's, in the queue's order
	Tick      time.Duration    // the cycle's interval
	CycleCap  int              // max_firings_per_cycle
	// Complete reports whether the mirror holds every open ticket (a
	// ticket's absence from the decisions then ends its episode).
	Complete bool
	// Runs is where the rules' last runs are read in a plan's cycle
	// (`deskbot rules plan`), which shows each rule at its next run; nil
	// in others, whose rules all run now.
	Runs RuleRunReader
	// Tickets is the mirror, read only when a rule runs later than now.
	Tickets func() []*sdclient.Ticket
	Ledger  FiringStates
	// Notifier gets the cycle's summary when it is a DryRunPoster.
	Notifier Notifier
	// Count moves the decisions metric: rule and outcome.
	Count func(rule, outcome string)
	// Outlook, when set, is handed the cycle's plan.Outlook.
	Outlook func(plan.Outlook)
	// ActionTimeout bounds the chat post, on a context of its own, as a
	// firing's actions are: a shutdown does not cut it.
	ActionTimeout time.Duration
}

// Run runs one dry-run cycle and returns what the caps would have held
// back, by rule and ticket.
func (r *DryRun) Run(ctx context.Context, cy DryCycle) map[string]map[int64]plan.Held {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fired == nil {
		r.fired = plan.DryMemory{}
	}
	decisions := cy.Decisions
	if cy.Complete {
		r.fired.EndEpisodes(cy.Set, cy.Rules, decisions)
	}
	var next map[string]time.Time // nil: every rule runs now
	if cy.Runs != nil {
		// A plan shows each rule at its first run (plan.NextRun).
		runs, err := cy.Runs.RuleRuns(ctx)
		if err != nil {
			cy.Log.Warn("cannot read when the rules last ran: the plan takes every rule as new", slog.Any("error", err))
		}
		next = plan.NextRuns(cy.Rules, runs, cy.Now)
		ds, err := plan.AtNextRuns(ctx, cy.Set, cy.Rules, cy.Tickets(), decisions, next, cy.Now)
		if err != nil {
			cy.Log.Info("plan stopped while evaluating the rules at their next runs", slog.Any("error", err))
		}
		decisions = ds // on error: the decisions as they were
	}
	o := plan.NewOutlook(cy.Now, cy.Tick, cy.CycleCap, cy.Set, cy.Rules, decisions, next, func(d rules.Decision) bool {
		if fired, known := r.fired.Fired(d, cy.Now); known {
			return fired
		}
		return firedPerLedger(ctx, cy, d)
	})
	for _, line := range o.Lines() {
		cy.Log.Info(line.Text, line.Attrs...)
	}
	held := r.remember(cy, o)
	if cy.Outlook != nil {
		cy.Outlook(o)
	}
	postDryRun(ctx, cy, o)
	return held
}

// firedPerLedger reports whether the ledger shows that a Claim of d could
// not win now (as the plan's pre-check); a state it cannot read counts as
// not fired.
func firedPerLedger(ctx context.Context, cy DryCycle, d rules.Decision) bool {
	info, found, err := cy.Ledger.FiringState(ctx, plan.Key(d))
	if err != nil {
		cy.Log.Warn("read firing state", slog.String("rule", d.Rule), slog.Int64("ticket", d.TicketID), slog.Any("error", err))
		return false // let Claim decide
	}
	return found && !d.Once.MayFire(info, cy.Now)
}

// remember notes what the dry-run cycle would have fired now, and holds
// the rest back as a real cycle's caps would (caller holds r.mu).
func (r *DryRun) remember(cy DryCycle, o plan.Outlook) map[string]map[int64]plan.Held {
	fired, deferred, held := r.fired.Remember(o, cy.Now)
	for _, d := range fired {
		cy.Count(d.Rule, "dry_run")
	}
	for _, d := range deferred {
		cy.Count(d.Rule, "deferred")
	}
	return held
}

// postDryRun posts what the cycle would have done to chat, when the
// notifier can (DryRunPoster).
func postDryRun(ctx context.Context, cy DryCycle, o plan.Outlook) {
	p, ok := cy.Notifier.(DryRunPoster)
	if !ok {
		return
	}
	ch, text := o.ChatSummary(cy.Set, dryRunChatLines)
	if text == "" {
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cy.ActionTimeout)
	defer cancel()
	if err := p.PostDryRun(actx, ch, text); err != nil {
		cy.Log.Warn("dry run: cannot post what the cycle would have done to chat", slog.String("channel", ch), slog.Any("error", err))
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
