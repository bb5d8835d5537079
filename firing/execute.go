package firing

import (
	"context"
	"log/slog"
	"maps"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// execution is the execute step's own state in one cycle: what it
// re-read, the agents it looked up, the firings it started, those waiting
// for a grouped message. Nothing outside the step reads it; Execute
// returns Outcomes.
type execution struct {
	Cycle
	d        *Deps
	p        *plan.Plan
	fits     func(cost int) bool
	reads    *Rereads
	admitted map[rules.FiringKey]bool       // the plan's, less what the queue left for later
	queued   map[string]map[int64]plan.Held // left for later when the cycle's time was up
	nQueued  int                            // len of queued, all rules
	agents   map[string]int64               // e-mail -> agent id
	fired    map[rules.FiringKey]bool       // one firing per rule per ticket per cycle
	firedBy  map[string]int                 // finished firings by rule
	groups   map[groupKey][]*run            // firings waiting for their grouped alert
	// deferredPages are the pages started without their first step.
	deferredPages int
}

// Outcomes is what the execute step did.
type Outcomes struct {
	Fired   int
	FiredBy map[string]int // finished firings by rule
	// Held are the decisions left for a later cycle by the queue (or, in
	// a dry run, by the caps), by rule and ticket.
	Held  map[string]map[int64]plan.Held
	Reads *Rereads // the tickets the cycle re-read
}

// Execute acts on the plan: in the queue's order (plan.Order: firings
// under way, then by class, ticket priority and age), the decisions the
// plan admitted, per ticket re-reading it once, re-checking each rule on
// the fresh ticket and firing the ones that still hold (claim, perform
// with markers, record; see fire); a rule's grouped alerts are posted once
// all of its firings of the cycle have reached them (flushGroups), and
// likewise the first steps of its grouped pages. Once a ticket has
// started, the next starts only when fits says its firings (costing that
// many desk requests) can start before the cycle's time is up: the rest
// is queued for the next cycles.
func Execute(ctx context.Context, d *Deps, cy Cycle, p *plan.Plan, fits func(cost int) bool) Outcomes {
	ex := &execution{Cycle: cy, d: d, p: p, fits: fits, reads: NewRereads(), admitted: maps.Clone(p.Admitted),
		queued: map[string]map[int64]plan.Held{}, agents: map[string]int64{}, fired: map[rules.FiringKey]bool{}, firedBy: map[string]int{}}
	byTicket := map[int64][]rules.Decision{}
	// Admitted firings of rules whose alerts or pages are grouped, not
	// handled yet: once none is left, their messages go out, before the
	// routine work behind them.
	grouped, paged := 0, 0
	for _, d := range p.Decisions {
		byTicket[d.TicketID] = append(byTicket[d.TicketID], d)
		if ex.admitted[plan.Key(d)] {
			grouped += b2i(p.Grouping[d.Rule])
			paged += b2i(p.PageGrouping[d.Rule])
		}
	}
	fired, started := 0, false
	handled := map[int64]bool{}
	for _, first := range p.Ordered {
		if handled[first.TicketID] || !ex.admitted[plan.Key(first)] {
			continue
		}
		handled[first.TicketID] = true
		group := byTicket[first.TicketID]
		switch {
		case ctx.Err() != nil || ex.d.Stopping():
			for _, d := range group {
				if ex.admitted[plan.Key(d)] {
					ex.d.Metrics.Decisions.WithLabelValues(d.Rule, "deferred").Inc()
				}
			}
			continue
		case started && !ex.fits(ex.groupCost(group)):
			ex.queueRest(group)
			continue
		}
		started = true
		fired += ex.executeTicket(ctx, group)
		for _, d := range group {
			if ex.admitted[plan.Key(d)] {
				grouped -= b2i(p.Grouping[d.Rule])
				paged -= b2i(p.PageGrouping[d.Rule])
			}
		}
		if grouped == 0 && len(ex.groups) > 0 {
			fired += ex.flushGroups(ctx)
		}
		if paged == 0 && ex.deferredPages > 0 {
			ex.tickGroupedPages(ctx)
		}
	}
	// Firings waiting for their grouped alert have begun: they finish even
	// when the scheduler is stopping (each action bounded, as in fire).
	fired += ex.flushGroups(ctx)
	ex.tickGroupedPages(ctx)
	if ex.nQueued > 0 {
		ex.Log.Info("the cycle's time is up: the rest of the queue waits for the next cycles, more urgent work first",
			slog.Int("queued", ex.nQueued), slog.Int("fired", fired))
	}
	return Outcomes{Fired: fired, FiredBy: ex.firedBy, Held: ex.queued, Reads: ex.reads}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tickGroupedPages takes the first steps of the pages the cycle started
// without them, if any.
func (ex *execution) tickGroupedPages(ctx context.Context) {
	if ex.deferredPages > 0 {
		// The pages of rules paging more tickets than their group_over were
		// started without their first step: one tick takes those steps,
		// one direct message per person. Were the tick busy (or this
		// process to die), the scheduled tick takes them.
		if err := ex.d.Pages.Tick(ctx); err != nil {
			ex.Log.Warn("on-call tick after starting pages had errors; the escalator retries", slog.Any("error", err))
		}
		ex.deferredPages = 0
	}
}

// queueRest leaves the admitted decisions of group for a later cycle:
// their time in this one is up.
func (ex *execution) queueRest(group []rules.Decision) {
	for _, d := range group {
		if !ex.admitted[plan.Key(d)] {
			continue
		}
		delete(ex.admitted, plan.Key(d))
		if ex.queued[d.Rule] == nil {
			ex.queued[d.Rule] = map[int64]plan.Held{}
		}
		ex.queued[d.Rule][d.TicketID] = plan.Held{At: ex.Now, Cap: plan.CapQueue, Class: plan.ClassOf(ex.Set.Rule(d.Rule)).String()}
		ex.nQueued++
		ex.d.Metrics.Decisions.WithLabelValues(d.Rule, "deferred").Inc()
	}
}

// executeTicket handles the decisions of one ticket that admit let through.
func (ex *execution) executeTicket(ctx context.Context, group []rules.Decision) int {
	id := group[0].TicketID
	var todo []rules.Decision
	for _, d := range group {
		if ex.admitted[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		return 0
	}
	ticket, err := ex.reads.Get(ctx, ex.d.Source, id)
	if err != nil {
		ex.rereadFailed(ctx, todo, id, err)
		return 0
	}
	if ticket == nil {
		for _, d := range todo {
			ex.d.Metrics.Decisions.WithLabelValues(d.Rule, "stale").Inc()
			ex.Log.Info("ticket is gone; not acting", slog.String("rule", d.Rule), slog.Int64("ticket", id))
		}
		return 0
	}
	decided := map[string]bool{}
	for _, d := range group {
		decided[d.Rule] = true
	}
	fired := 0
	for _, d := range todo {
		log := ex.Log.With(slog.String("rule", d.Rule), slog.Int64("ticket", id))
		key := rules.FiringKey{Rule: d.Rule, TicketID: id}
		if ex.fired[key] {
			ex.d.Metrics.Decisions.WithLabelValues(d.Rule, "deferred").Inc()
			log.Info("rule already fired on this ticket in this cycle; not again")
			continue
		}
		r := ex.Set.Rule(d.Rule)
		if r == nil {
			continue
		}
		again, ok := ex.recheck(r, ticket, log)
		if !ok {
			continue
		}
		ex.fired[key] = true
		out, updated := ex.fire(ctx, r, again, ticket, decided, log)
		if out == finished {
			fired++
		}
		if updated != nil {
			ticket = updated
			ex.reads.Put(updated)
			ex.d.Source.Observe(updated)
			ex.noteCascade(ticket, decided, d.Rule)
		}
	}
	return fired
}

// rereadFailed handles the decisions of a ticket whose re-read failed:
// queued when the request budget's wait outlasted the re-read, else
// deferred (waiting) or failed until a later cycle.
func (ex *execution) rereadFailed(ctx context.Context, todo []rules.Decision, id int64, err error) {
	if Waiting(err) && !ex.d.Stopping() && ctx.Err() == nil {
		ex.queueRest(todo) // the budget's wait outlasted the re-read's context
		ex.Log.Info("waiting for the request budget to re-read the ticket before acting; its firings wait in the queue",
			slog.Int64("ticket", id), slog.Any("error", err))
		return
	}
	for _, d := range todo {
		if Waiting(err) {
			ex.d.Metrics.Decisions.WithLabelValues(d.Rule, "deferred").Inc()
			ex.Log.Info("waiting for the request budget to re-read the ticket before acting; it goes on in a later cycle",
				slog.String("rule", d.Rule), slog.Int64("ticket", id), slog.Any("error", err))
			continue
		}
		ex.d.Metrics.Decisions.WithLabelValues(d.Rule, "failed").Inc()
		ex.Log.Warn("cannot re-read ticket before acting; retrying next cycle",
			slog.String("rule", d.Rule), slog.Int64("ticket", id), slog.Any("error", err))
	}
}

// recheck is r's decision on the re-read ticket: the rest of a firing
// under way, matching or not, else the rule evaluated again; false when
// the rule no longer holds or failed (counted and logged).
func (ex *execution) recheck(r *rules.Rule, ticket *sdclient.Ticket, log *slog.Logger) (rules.Decision, bool) {
	if ex.p.Begun[rules.FiringKey{Rule: r.Name, TicketID: ticket.ID}] {
		// A firing under way finishes, matching or not.
		acts, err := ex.Set.RenderActions(r, ticket, ex.Now)
		if err != nil {
			ex.d.Metrics.Decisions.WithLabelValues(r.Name, "error").Inc()
			log.Error("cannot render the rest of a firing under way", slog.Any("error", err))
			return rules.Decision{}, false
		}
		return rules.Decision{Rule: r.Name, Once: r.Once, TicketID: ticket.ID, Ticket: ticket, Actions: acts}, true
	}
	again := ex.Set.EvaluateRule(r, []*sdclient.Ticket{ticket}, ex.Now)
	if len(again) == 0 {
		ex.d.Metrics.Decisions.WithLabelValues(r.Name, "stale").Inc()
		log.Info("rule no longer holds on the re-read ticket; not acting")
		return rules.Decision{}, false
	}
	if again[0].Err != nil {
		ex.d.Metrics.Decisions.WithLabelValues(r.Name, "error").Inc()
		log.Error("rule failed on the re-read ticket", slog.Any("error", again[0].Err))
		return rules.Decision{}, false
	}
	return again[0], true
}

// noteCascade logs the rules of the job that the bot's own update made
// match: they are not fired in this cycle (one firing per rule per ticket
// per cycle, and only from what the poll saw); a later poll decides.
func (ex *execution) noteCascade(t *sdclient.Ticket, decided map[string]bool, by string) {
	for _, r := range ex.Rules {
		if decided[r.Name] {
			continue
		}
		if ds := ex.Set.EvaluateRule(r, []*sdclient.Ticket{t}, ex.Now); len(ds) > 0 {
			decided[r.Name] = true
			ex.d.Metrics.Cascades.WithLabelValues(r.Name).Inc()
			ex.Log.Info("cascade: the bot's own update made another rule match; deferred to a later poll",
				slog.String("rule", r.Name), slog.Int64("ticket", t.ID), slog.String("caused_by", by))
		}
	}
}

// groupCost estimates the desk requests of a ticket's admitted firings:
// its re-read, unless the cycle has it, and each note, reply and update.
func (ex *execution) groupCost(group []rules.Decision) int {
	n := 0
	if len(group) > 0 {
		if _, ok := ex.reads.Fresh(group[0].TicketID); !ok {
			n++
		}
	}
	for _, d := range group {
		r := ex.Set.Rule(d.Rule)
		if r == nil || !ex.admitted[plan.Key(d)] {
			continue
		}
		for _, k := range r.ActionKinds() {
			switch k {
			case rules.ActionNote, rules.ActionReply, rules.ActionUpdate:
				n++
			}
		}
	}
	return n
}
