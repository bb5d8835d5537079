package scheduler

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// execution is the execute step's own state in one cycle: what it
// re-read, the agents it looked up, the firings it started, those waiting
// for a grouped message. Nothing outside the step reads it; the step
// returns outcomes.
type execution struct {
	*cycle
	p        *plan.Plan
	q        pace
	reads    *firing.Rereads
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

// outcomes is what the execute step did.
type outcomes struct {
	fired   int
	firedBy map[string]int // finished firings by rule
	// held are the decisions left for a later cycle by the queue (or, in
	// a dry run, by the caps), by rule and ticket.
	held     map[string]map[int64]plan.Held
	reads    *firing.Rereads // the tickets the cycle re-read
	requests int             // the step's desk requests
}

// execute acts on the plan: in the queue's order (order: firings under
// way, then by plan.Class, ticket priority and age), the decisions the plan
// admitted, per ticket re-reading it once, re-checking each rule on the
// fresh ticket and firing the ones that still hold; a rule's grouped
// alerts are posted once all of its firings of the cycle have reached them
// (flushGroups), and likewise the first steps of its grouped pages. A
// scheduled cycle starts no ticket whose firings would wait for the budget
// past its deadline (q; see pace.fits): the rest is queued for the next
// cycles.
func (s *Scheduler) execute(ctx context.Context, cy *cycle, p *plan.Plan, q pace) outcomes {
	ex := &execution{cycle: cy, p: p, q: q, reads: firing.NewRereads(), admitted: maps.Clone(p.Admitted),
		queued: map[string]map[int64]plan.Held{}, agents: map[string]int64{}, fired: map[rules.FiringKey]bool{}, firedBy: map[string]int{}}
	before := cy.requests
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
		case ctx.Err() != nil || s.stopping.Load():
			for _, d := range group {
				if ex.admitted[plan.Key(d)] {
					s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
				}
			}
			continue
		case started && !q.fits(ex.groupCost(group)):
			s.queueRest(ex, group)
			continue
		}
		started = true
		fired += s.executeTicket(ctx, ex, group)
		for _, d := range group {
			if ex.admitted[plan.Key(d)] {
				grouped -= b2i(p.Grouping[d.Rule])
				paged -= b2i(p.PageGrouping[d.Rule])
			}
		}
		if grouped == 0 && len(ex.groups) > 0 {
			fired += s.flushGroups(ctx, ex)
		}
		if paged == 0 && ex.deferredPages > 0 {
			s.tickGroupedPages(ctx, ex)
		}
	}
	// Firings waiting for their grouped alert have begun: they finish even
	// when the scheduler is stopping (each action bounded, as in fire).
	fired += s.flushGroups(ctx, ex)
	s.tickGroupedPages(ctx, ex)
	if ex.nQueued > 0 {
		ex.log.Info("the cycle's time is up: the rest of the queue waits for the next cycles, more urgent work first",
			slog.Int("queued", ex.nQueued), slog.Int("fired", fired))
	}
	return outcomes{fired: fired, firedBy: ex.firedBy, held: ex.queued, reads: ex.reads, requests: cy.requests - before}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tickGroupedPages takes the first steps of the pages the cycle started
// without them, if any.
func (s *Scheduler) tickGroupedPages(ctx context.Context, ex *execution) {
	if ex.deferredPages > 0 {
		// The pages of rules paging more tickets than their group_over were
		// started without their first step: one tick takes those steps,
		// one direct message per person. Were the tick busy (or this
		// process to die), the scheduled tick takes them.
		if _, err := s.tickPages(ctx); err != nil {
			ex.log.Warn("on-call tick after starting pages had errors; the escalator retries", slog.Any("error", err))
		}
		ex.deferredPages = 0
	}
}

// deadline is when a scheduled cycle starting at now must have started
// its last firing: when its next run is due (the tick, stretched by the
// budget's planner), less the time a request takes at the background
// budget's pace (a twentieth of the tick without a budget), so that the
// next cycle's sync starts on time.
func (s *Scheduler) deadline(now time.Time) time.Time {
	next := time.Duration(float64(s.tickEvery()) * max(s.plan.stretch(), 1))
	margin := next / 20
	if s.cfg.budget > 0 {
		margin = min(budgetWindow/time.Duration(s.cfg.budget), next/4)
	}
	return now.Add(next - margin)
}

// queueRest leaves the admitted decisions of group for a later cycle:
// their time in this one is up.
func (s *Scheduler) queueRest(ex *execution, group []rules.Decision) {
	for _, d := range group {
		if !ex.admitted[plan.Key(d)] {
			continue
		}
		delete(ex.admitted, plan.Key(d))
		if ex.queued[d.Rule] == nil {
			ex.queued[d.Rule] = map[int64]plan.Held{}
		}
		ex.queued[d.Rule][d.TicketID] = plan.Held{At: ex.now, Cap: plan.CapQueue, Class: plan.ClassOf(ex.set.Rule(d.Rule)).String()}
		ex.nQueued++
		s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
	}
}

// executeTicket handles the decisions of one ticket that admit let through.
func (s *Scheduler) executeTicket(ctx context.Context, ex *execution, group []rules.Decision) int {
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
	ticket, err := s.reread(ctx, ex.cycle, ex.reads, id)
	if err != nil {
		s.rereadFailed(ctx, ex, todo, id, err)
		return 0
	}
	if ticket == nil {
		for _, d := range todo {
			s.m.decisions.WithLabelValues(d.Rule, "stale").Inc()
			ex.log.Info("ticket is gone; not acting", slog.String("rule", d.Rule), slog.Int64("ticket", id))
		}
		return 0
	}
	decided := map[string]bool{}
	for _, d := range group {
		decided[d.Rule] = true
	}
	fired := 0
	for _, d := range todo {
		log := ex.log.With(slog.String("rule", d.Rule), slog.Int64("ticket", id))
		key := rules.FiringKey{Rule: d.Rule, TicketID: id}
		if ex.fired[key] {
			s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
			log.Info("rule already fired on this ticket in this cycle; not again")
			continue
		}
		r := ex.set.Rule(d.Rule)
		if r == nil {
			continue
		}
		again, ok := s.recheck(ex, r, ticket, log)
		if !ok {
			continue
		}
		ex.fired[key] = true
		out, updated := s.fire(ctx, ex, r, again, ticket, decided, log)
		if out == finished {
			fired++
		}
		if updated != nil {
			ticket = updated
			ex.reads.Put(updated)
			s.observe(updated)
			s.noteCascade(ex, ticket, decided, d.Rule)
		}
	}
	return fired
}

// rereadFailed handles the decisions of a ticket whose re-read failed:
// queued when the request budget's wait outlasted the re-read, else
// deferred (waiting) or failed until a later cycle.
func (s *Scheduler) rereadFailed(ctx context.Context, ex *execution, todo []rules.Decision, id int64, err error) {
	if firing.Waiting(err) && !s.stopping.Load() && ctx.Err() == nil {
		s.queueRest(ex, todo) // the budget's wait outlasted the re-read's context
		ex.log.Info("waiting for the request budget to re-read the ticket before acting; its firings wait in the queue",
			slog.Int64("ticket", id), slog.Any("error", err))
		return
	}
	for _, d := range todo {
		if firing.Waiting(err) {
			s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
			ex.log.Info("waiting for the request budget to re-read the ticket before acting; it goes on in a later cycle",
				slog.String("rule", d.Rule), slog.Int64("ticket", id), slog.Any("error", err))
			continue
		}
		s.m.decisions.WithLabelValues(d.Rule, "failed").Inc()
		ex.log.Warn("cannot re-read ticket before acting; retrying next cycle",
			slog.String("rule", d.Rule), slog.Int64("ticket", id), slog.Any("error", err))
	}
}

// recheck is r's decision on the re-read ticket: the rest of a firing
// under way, matching or not, else the rule evaluated again; false when
// the rule no longer holds or failed (counted and logged).
func (s *Scheduler) recheck(ex *execution, r *rules.Rule, ticket *sdclient.Ticket, log *slog.Logger) (rules.Decision, bool) {
	if ex.p.Begun[rules.FiringKey{Rule: r.Name, TicketID: ticket.ID}] {
		// A firing under way finishes, matching or not.
		acts, err := ex.set.RenderActions(r, ticket, ex.now)
		if err != nil {
			s.m.decisions.WithLabelValues(r.Name, "error").Inc()
			log.Error("cannot render the rest of a firing under way", slog.Any("error", err))
			return rules.Decision{}, false
		}
		return rules.Decision{Rule: r.Name, Once: r.Once, TicketID: ticket.ID, Ticket: ticket, Actions: acts}, true
	}
	again := ex.set.EvaluateRule(r, []*sdclient.Ticket{ticket}, ex.now)
	if len(again) == 0 {
		s.m.decisions.WithLabelValues(r.Name, "stale").Inc()
		log.Info("rule no longer holds on the re-read ticket; not acting")
		return rules.Decision{}, false
	}
	if again[0].Err != nil {
		s.m.decisions.WithLabelValues(r.Name, "error").Inc()
		log.Error("rule failed on the re-read ticket", slog.Any("error", again[0].Err))
		return rules.Decision{}, false
	}
	return again[0], true
}

// noteCascade logs the rules of the job that the bot's own update made
// match: they are not fired in this cycle (one firing per rule per ticket
// per cycle, and only from what the poll saw); a later poll decides.
func (s *Scheduler) noteCascade(ex *execution, t *sdclient.Ticket, decided map[string]bool, by string) {
	for _, r := range ex.rules {
		if decided[r.Name] {
			continue
		}
		if ds := ex.set.EvaluateRule(r, []*sdclient.Ticket{t}, ex.now); len(ds) > 0 {
			decided[r.Name] = true
			s.m.cascades.WithLabelValues(r.Name).Inc()
			ex.log.Info("cascade: the bot's own update made another rule match; deferred to a later poll",
				slog.String("rule", r.Name), slog.Int64("ticket", t.ID), slog.String("caused_by", by))
		}
	}
}
