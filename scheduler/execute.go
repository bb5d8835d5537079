package scheduler

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"strings"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Marker returns the invisible marker that names action i of firing f.
// Every note and reply carries it (as an HTML comment at the end of the
// body) and every alert carries it as its Key, so that a worker resuming
// a crashed firing can tell whether the action already happened.
func Marker(f rules.Firing, i int) string {
	return fmt.Sprintf(markerPrefix+"%s/%d/%d.%d/%d", f.Key.Rule, f.Key.TicketID, f.Episode, f.Seq, i)
}

// markerPrefix starts every marker.
const markerPrefix = "deskbot:f="

// withMarker appends the marker comment (for people reading the desk) and
// the marker's signed mark (see marker.go) to a note or reply body.
func withMarker(m *store.Marks, body, marker string) string {
	return strings.TrimRight(body, "\n") + "\n<!-- " + marker + " -->" + m.FiringTag(marker)
}

// execute acts on decisions: in the queue's order (order: firings under
// way, then by class, ticket priority and age) it skips what the ledger
// shows as fired and what the per-cycle caps hold back (admit), and per
// ticket re-reads it once, re-checks each rule on the fresh ticket and
// fires the ones that still hold; a rule's grouped alerts are posted once
// all of its firings of the cycle have reached them (flushGroups), and
// likewise the first steps of its grouped pages. A scheduled cycle starts
// no ticket whose firings would wait for the budget past its deadline (the
// next tick; see fits): the rest is queued for the next cycles. It returns
// how many firings finished.
func (s *Scheduler) execute(ctx context.Context, cy *cycle, decisions []rules.Decision) int {
	sortDecisions(cy.set, decisions) // by ticket, then file order: a ticket's decisions together
	s.prefetchStates(ctx, cy, decisions)
	ordered := s.order(cy, decisions)
	s.admit(ctx, cy, ordered)
	byTicket := map[int64][]rules.Decision{}
	// Admitted firings of rules whose alerts or pages are grouped, not
	// handled yet: once none is left, their messages go out, before the
	// routine work behind them.
	grouped, paged := 0, 0
	for _, d := range decisions {
		byTicket[d.TicketID] = append(byTicket[d.TicketID], d)
		if cy.admitted[keyOf(d)] {
			grouped += b2i(cy.grouping[d.Rule])
			paged += b2i(cy.pageGrouping[d.Rule])
		}
	}
	fired, started := 0, false
	handled := map[int64]bool{}
	for _, first := range ordered {
		if handled[first.TicketID] || !cy.admitted[keyOf(first)] {
			continue
		}
		handled[first.TicketID] = true
		group := byTicket[first.TicketID]
		switch {
		case ctx.Err() != nil || s.stopping.Load():
			for _, d := range group {
				if cy.admitted[keyOf(d)] {
					s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
				}
			}
			continue
		case started && !s.fits(cy, group):
			s.queueRest(cy, group)
			continue
		}
		started = true
		fired += s.executeTicket(ctx, cy, group)
		for _, d := range group {
			if cy.admitted[keyOf(d)] {
				grouped -= b2i(cy.grouping[d.Rule])
				paged -= b2i(cy.pageGrouping[d.Rule])
			}
		}
		if grouped == 0 && len(cy.groups) > 0 {
			fired += s.flushGroups(ctx, cy)
		}
		if paged == 0 && cy.deferredPages > 0 {
			s.tickGroupedPages(ctx, cy)
		}
	}
	// Firings waiting for their grouped alert have begun: they finish even
	// when the scheduler is stopping (each action bounded, as in fire).
	fired += s.flushGroups(ctx, cy)
	s.tickGroupedPages(ctx, cy)
	if !s.cfg.dryRun {
		s.noteHeld(cy)
		s.noteWaiting(cy)
	}
	if n := cy.queuedCount(); n > 0 {
		cy.log.Info("the cycle's time is up: the rest of the queue waits for the next cycles, more urgent work first",
			slog.Int("queued", n), slog.Int("fired", fired))
	}
	return fired
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tickGroupedPages takes the first steps of the pages the cycle started
// without them, if any.
func (s *Scheduler) tickGroupedPages(ctx context.Context, cy *cycle) {
	if cy.deferredPages > 0 {
		// The pages of rules paging more tickets than their group_over were
		// started without their first step: one tick takes those steps,
		// one direct message per person. Were the tick busy (or this
		// process to die), the scheduled tick takes them.
		if _, err := s.tickPages(ctx); err != nil {
			cy.log.Warn("on-call tick after starting pages had errors; the escalator retries", slog.Any("error", err))
		}
		cy.deferredPages = 0
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
func (s *Scheduler) queueRest(cy *cycle, group []rules.Decision) {
	for _, d := range group {
		if !cy.admitted[keyOf(d)] {
			continue
		}
		delete(cy.admitted, keyOf(d))
		if cy.held[d.Rule] == nil {
			cy.held[d.Rule] = map[int64]Held{}
		}
		cy.held[d.Rule][d.TicketID] = Held{At: cy.now, Cap: capQueue, Class: classOf(cy.set.Rule(d.Rule)).String()}
		cy.queued++
		s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
	}
}

// executeTicket handles the decisions of one ticket that admit let through.
func (s *Scheduler) executeTicket(ctx context.Context, cy *cycle, group []rules.Decision) int {
	id := group[0].TicketID
	var todo []rules.Decision
	for _, d := range group {
		if cy.admitted[rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}] {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		return 0
	}
	ticket, err := s.reread(ctx, cy, id)
	if err != nil {
		if waiting(err) && !s.stopping.Load() && ctx.Err() == nil {
			s.queueRest(cy, todo) // the budget's wait outlasted the re-read's context
			cy.log.Info("waiting for the request budget to re-read the ticket before acting; its firings wait in the queue",
				slog.Int64("ticket", id), slog.Any("error", err))
			return 0
		}
		for _, d := range todo {
			if waiting(err) {
				s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
				cy.log.Info("waiting for the request budget to re-read the ticket before acting; it goes on in a later cycle",
					slog.String("rule", d.Rule), slog.Int64("ticket", id), slog.Any("error", err))
				continue
			}
			s.m.decisions.WithLabelValues(d.Rule, "failed").Inc()
			cy.log.Warn("cannot re-read ticket before acting; retrying next cycle",
				slog.String("rule", d.Rule), slog.Int64("ticket", id), slog.Any("error", err))
		}
		return 0
	}
	if ticket == nil {
		for _, d := range todo {
			s.m.decisions.WithLabelValues(d.Rule, "stale").Inc()
			cy.log.Info("ticket is gone; not acting", slog.String("rule", d.Rule), slog.Int64("ticket", id))
		}
		return 0
	}
	decided := map[string]bool{}
	for _, d := range group {
		decided[d.Rule] = true
	}
	fired := 0
	for _, d := range todo {
		log := cy.log.With(slog.String("rule", d.Rule), slog.Int64("ticket", id))
		key := rules.FiringKey{Rule: d.Rule, TicketID: id}
		if cy.fired[key] {
			s.m.decisions.WithLabelValues(d.Rule, "deferred").Inc()
			log.Info("rule already fired on this ticket in this cycle; not again")
			continue
		}
		r := cy.set.Rule(d.Rule)
		if r == nil {
			continue
		}
		var again []rules.Decision
		if cy.begun[key] {
			// A firing under way finishes, matching or not.
			acts, err := cy.set.RenderActions(r, ticket, cy.now)
			if err != nil {
				s.m.decisions.WithLabelValues(d.Rule, "error").Inc()
				log.Error("cannot render the rest of a firing under way", slog.Any("error", err))
				continue
			}
			again = []rules.Decision{{Rule: r.Name, Once: r.Once, TicketID: id, Ticket: ticket, Actions: acts}}
		} else {
			again = cy.set.EvaluateRule(r, []*sdclient.Ticket{ticket}, cy.now)
		}
		if len(again) == 0 {
			s.m.decisions.WithLabelValues(d.Rule, "stale").Inc()
			log.Info("rule no longer holds on the re-read ticket; not acting")
			continue
		}
		if again[0].Err != nil {
			s.m.decisions.WithLabelValues(d.Rule, "error").Inc()
			log.Error("rule failed on the re-read ticket", slog.Any("error", again[0].Err))
			continue
		}
		cy.fired[key] = true
		out, updated := s.fire(ctx, cy, r, again[0], ticket, decided, log)
		if out == finished {
			fired++
		}
		if updated != nil {
			ticket = updated
			cy.fresh[id] = updated
			s.observe(updated)
			s.noteCascade(cy, ticket, decided, d.Rule)
		}
	}
	return fired
}

// noteCascade logs the rules of the job that the bot's own update made
// match: they are not fired in this cycle (one firing per rule per ticket
// per cycle, and only from what the poll saw); a later poll decides.
func (s *Scheduler) noteCascade(cy *cycle, t *sdclient.Ticket, decided map[string]bool, by string) {
	for _, r := range cy.rules {
		if decided[r.Name] {
			continue
		}
		if ds := cy.set.EvaluateRule(r, []*sdclient.Ticket{t}, cy.now); len(ds) > 0 {
			decided[r.Name] = true
			s.m.cascades.WithLabelValues(r.Name).Inc()
			cy.log.Info("cascade: the bot's own update made another rule match; deferred to a later poll",
				slog.String("rule", r.Name), slog.Int64("ticket", t.ID), slog.String("caused_by", by))
		}
	}
}

// prefetchStates reads, one statement per rule, the ledger states that
// alreadyFired checks for the cycle's decisions: a rule still matching
// thousands of tickets it already fired on would otherwise cost one ledger
// transaction per ticket every cycle. A failed read leaves the rule to the
// one-by-one path.
func (s *Scheduler) prefetchStates(ctx context.Context, cy *cycle, decisions []rules.Decision) {
	if s.cfg.dryRun {
		return
	}
	byRule := map[string][]int64{}
	for _, d := range decisions {
		if d.Err == nil {
			byRule[d.Rule] = append(byRule[d.Rule], d.TicketID)
		}
	}
	cy.states = make(map[string]map[int64]rules.FiringRecord, len(byRule))
	for rule, ids := range byRule {
		states, err := s.ledger.FiringStates(ctx, rule, ids)
		if err != nil {
			cy.log.Warn("read firing states", slog.String("rule", rule), slog.Any("error", err))
			continue
		}
		cy.states[rule] = states
	}
}

// alreadyFired is the cheap pre-check: true when the ledger shows that a
// Claim could not win now (the same rules.Once.MayFire the Claim decides
// with).
func (s *Scheduler) alreadyFired(ctx context.Context, cy *cycle, d rules.Decision, log *slog.Logger) bool {
	var (
		info  rules.FiringRecord
		found bool
	)
	if states, ok := cy.states[d.Rule]; ok {
		info, found = states[d.TicketID]
	} else {
		var err error
		info, found, err = s.ledger.FiringState(ctx, rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID})
		if err != nil {
			log.Warn("read firing state", slog.Any("error", err))
			return false // let Claim decide
		}
	}
	return found && !d.Once.MayFire(info, cy.now)
}

// reread returns the ticket as the desk has it now (once per cycle), nil
// when it no longer exists.
func (s *Scheduler) reread(ctx context.Context, cy *cycle, id int64) (*sdclient.Ticket, error) {
	if t, ok := cy.fresh[id]; ok {
		return t, nil
	}
	if cy.gone[id] {
		return nil, nil
	}
	t, resp, err := cy.desk.GetTicket(ctx, id)
	s.count(cy, resp, err)
	if errors.Is(err, sdclient.ErrNotFound) || (err == nil && t != nil && t.Deleted) {
		cy.gone[id] = true
		s.forget(id)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cy.fresh[id] = t
	s.observe(t) // the freshest view: the mirror takes it too
	if s.statuses.notice(t) {
		cy.log.Info("ticket shows an unknown open status; re-reading the statuses", slog.Int64("ticket", id), slog.Int("status", t.Status))
	}
	return t, nil
}

// outcome is how far a firing got in one go.
type outcome int

const (
	failed    outcome = iota // stopped: pending until its retry or lease
	finished                 // every action done, the firing recorded
	suspended                // waiting at an alert for the cycle's grouped message
)

// run is a firing being performed: claimed, with the actions done so far.
type run struct {
	r       *rules.Rule
	d       rules.Decision
	f       rules.Firing
	t       *sdclient.Ticket
	log     *slog.Logger
	done    map[int]bool
	checked map[int]bool // actions of a resumed firing found not to have happened
	alone   map[int]bool // alerts posted alone in a grouped cycle
	next    int          // the next action to perform
	convs   []*sdclient.Conversation
	updated *sdclient.Ticket // the ticket after the firing's update, if any
	decided map[string]bool  // the rules decided on the ticket (cascades)
}

// actionContext bounds a firing's writes: a shutdown must not cut them in
// half, so they get their own context. A stop lets the request under way
// finish and starts no new one: the cycle's desk (cycle.desk, a
// Desk.Stopping view) makes a request still waiting for rate budget give
// up with sdclient.ErrStopped, and the firing is released.
func (s *Scheduler) actionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.actionTimeout)
}

// fire claims the decision and performs its actions (proceed). updated is
// the ticket after an update action.
func (s *Scheduler) fire(ctx context.Context, cy *cycle, r *rules.Rule, d rules.Decision, t *sdclient.Ticket, decided map[string]bool, log *slog.Logger) (out outcome, updated *sdclient.Ticket) {
	key := rules.FiringKey{Rule: r.Name, TicketID: t.ID}
	actx, cancel := s.actionContext(ctx)
	f, err := claim(actx, s.ledger, key, r.Once, cy.now, s.cfg.lease, s.MatchedSince(r.Name, t.ID, cy.now))
	cancel()
	if errors.Is(err, ErrNotLeader) {
		// Another process leads in a newer epoch (or this one gave the
		// leadership up): the ledger refused before anything was done, and
		// the leadership said so once.
		log.Debug("not claimed: this process no longer leads the scheduler", slog.Any("error", err))
		return failed, nil
	}
	if err != nil {
		s.m.decisions.WithLabelValues(r.Name, "failed").Inc()
		log.Error("claim failed; retrying next cycle", slog.Any("error", err))
		return failed, nil
	}
	if !f.Won {
		s.m.decisions.WithLabelValues(r.Name, "already_fired").Inc()
		log.Debug("not claimed: already fired in this episode or claimed elsewhere", slog.Int64("episode", f.Episode))
		return failed, nil
	}
	log = log.With(slog.Int64("episode", f.Episode), slog.Int64("seq", f.Seq))
	if f.Resumed {
		log.Info("resuming a firing left pending", slog.Any("done", f.Done))
	}
	ru := &run{r: r, d: d, f: f, t: t, log: log, done: map[int]bool{}, checked: map[int]bool{}, alone: map[int]bool{}, decided: decided}
	for _, i := range f.Done {
		ru.done[i] = true
	}
	out = s.proceed(ctx, cy, ru)
	return out, ru.updated
}

// resumedDone reports whether action i of a resumed firing already reached
// its target before the crash (an update whose values hold, a note, reply
// or alert found there), and records it as done. stop is true when the
// firing must stop here, left pending.
func (s *Scheduler) resumedDone(ctx context.Context, cy *cycle, ru *run, i int, marker string, alog *slog.Logger) (done, stop bool) {
	a := ru.d.Actions[i]
	if !ru.f.Resumed {
		return false, false
	}
	var why string
	if a.Kind == rules.ActionUpdate {
		if holds, err := s.updateHolds(ctx, cy, ru.t, a); err != nil || !holds {
			return false, false
		}
		why = "the update's values already hold: it happened before the crash, or somebody made it; not repeating it"
	} else {
		if ru.checked[i] {
			return false, false
		}
		var there bool
		var err error
		if a.Kind == rules.ActionDM {
			there, err = s.alreadyDMed(ctx, cy, ru.r, ru.t, a, marker)
		} else {
			there, err = s.alreadyThere(ctx, cy, ru.t.ID, ru.f, a, marker, &ru.convs)
		}
		if err != nil {
			s.countFailed(ru, a.Kind, err)
			if !s.yieldFiring(ctx, cy, ru, alog, err) {
				alog.Error("cannot check whether the action already happened; leaving the firing pending", slog.Any("error", err))
			}
			return false, true
		}
		if !there {
			ru.checked[i] = true
			return false, false
		}
		why = "action already happened before the crash; not repeating it"
	}
	s.m.actions.WithLabelValues(string(a.Kind), "already_done").Inc()
	alog.Info(why)
	if err := s.ledger.ActionDone(ctx, ru.f.ID, i); err != nil {
		alog.Error("record action done", slog.Any("error", err))
		return false, true
	}
	ru.done[i] = true
	return true, false
}

// proceed performs a firing's actions from ru.next on, and records the
// firing when the last is done. In a cycle that groups the rule's alerts,
// it stops at an alert and leaves the firing waiting for the group
// (cy.join); flushGroups goes on with it.
func (s *Scheduler) proceed(ctx context.Context, cy *cycle, ru *run) (out outcome) {
	actx, cancel := s.actionContext(ctx)
	defer cancel()
	// One line per firing at info, whatever became of it, so that an
	// operator can follow a ticket with grep or a log query (the causes
	// of a stop have their own lines at warn or error).
	defer func() {
		if out == suspended {
			return // it goes on with the cycle's grouped message
		}
		result := "fired"
		if out == failed {
			result = "pending"
		}
		ru.log.Info("firing", slog.String("outcome", result), slog.Int("actions_done", len(ru.done)),
			slog.Int("actions", len(ru.d.Actions)), slog.Bool("resumed", ru.f.Resumed), slog.String("what", describeActions(ru.d.Actions)))
	}()
	r, f, t, log := ru.r, ru.f, ru.t, ru.log
	for i := ru.next; i < len(ru.d.Actions); i++ {
		a := ru.d.Actions[i]
		alog := log.With(slog.String("action", string(a.Kind)), slog.Int("index", i))
		if ru.done[i] {
			s.m.actions.WithLabelValues(string(a.Kind), "already_done").Inc()
			continue
		}
		marker := Marker(f, i)
		if done, stop := s.resumedDone(actx, cy, ru, i, marker, alog); stop {
			return failed
		} else if done {
			continue
		}
		if a.Kind == rules.ActionAlert && cy.grouping[r.Name] && !ru.alone[i] {
			ru.next = i
			cy.join(ru, i)
			alog.Debug("alert waits for the rule's grouped message of this cycle")
			return suspended
		}
		a = s.renderedNow(cy, ru, i)
		u, err := s.perform(actx, cy, r, f, t, a, marker)
		if err != nil {
			s.actionFailed(actx, cy, ru, i, err)
			return failed
		}
		s.m.actions.WithLabelValues(string(a.Kind), "ok").Inc()
		if u != nil {
			ru.updated, t, ru.t = u, u, u
		}
		if err := s.ledger.ActionDone(actx, f.ID, i); err != nil {
			alog.Error("record action done; the firing resumes when its lease ends", slog.Any("error", err))
			return failed
		}
		ru.done[i] = true
		alog.Debug("action done")
	}
	ru.next = len(ru.d.Actions)
	if err := s.ledger.Finish(actx, f.ID, s.cfg.clock.Now()); err != nil {
		s.m.decisions.WithLabelValues(r.Name, "failed").Inc()
		log.Error("finish firing; it resumes when its lease ends", slog.Any("error", err))
		return failed
	}
	s.m.decisions.WithLabelValues(r.Name, "fired").Inc()
	cy.firedBy[r.Name]++
	return finished
}

// actionFailed records that action i of a firing failed with err: a
// refusal (the action certainly did not happen) releases the claim until
// its retry; anything else leaves it pending until its lease ends, when a
// resumed firing checks whether the action happened.
func (s *Scheduler) actionFailed(actx context.Context, cy *cycle, ru *run, i int, err error) {
	a := ru.d.Actions[i]
	alog := ru.log.With(slog.String("action", string(a.Kind)), slog.Int("index", i))
	s.countFailed(ru, a.Kind, err)
	if s.yieldFiring(actx, cy, ru, alog, err) {
		return
	}
	if !notSent(err) {
		alog.Error("action failed; the firing resumes when its lease ends", slog.Any("error", err),
			slog.Duration("lease", s.cfg.lease))
		return
	}
	// This action certainly did not happen and those before it are
	// recorded as done: give the claim up until the retry.
	wait := retryDelay(err, ru.f.Attempts)
	var at time.Time
	if wait > 0 {
		at = cy.now.Add(wait) // the poll's time: the next poll at +1m is due
	}
	if rerr := s.ledger.Release(actx, ru.f.ID, at, err.Error()); rerr != nil {
		alog.Error("release claim", slog.Any("error", rerr))
	}
	level, msg := slog.LevelError, "action refused; the firing is retried later"
	if waiting(err) {
		// The desk's own rate limit (a 429 after the retries): the budget,
		// not the action, was the problem.
		level, msg = slog.LevelInfo, "the desk's rate limit held the action back; the firing goes on next cycle"
	}
	alog.Log(actx, level, msg, slog.Any("error", err),
		slog.Int("attempt", ru.f.Attempts), slog.Duration("retry_in", wait))
}

// waiting reports whether err only says that a request waited, and was
// not sent: for deskbot's own request budget, the desk's rate limit (a
// 429), or a stop. Such a firing is deferred, not failed, in the metrics
// and the logs, so that DeskbotActionsFailing counts real failures only.
func waiting(err error) bool {
	return errors.Is(err, sdclient.ErrBudgetWait) || errors.Is(err, sdclient.ErrListBudgetWait) ||
		errors.Is(err, sdclient.ErrRateLimited) || errors.Is(err, sdclient.ErrStopped)
}

// countFailed counts an action that did not go through: deferred when it
// only waited (see waiting), else an error and a failed decision.
func (s *Scheduler) countFailed(ru *run, kind rules.ActionKind, err error) {
	if waiting(err) {
		s.m.actions.WithLabelValues(string(kind), "deferred").Inc()
		s.m.decisions.WithLabelValues(ru.r.Name, "deferred").Inc()
		return
	}
	s.m.actions.WithLabelValues(string(kind), "error").Inc()
	s.m.decisions.WithLabelValues(ru.r.Name, "failed").Inc()
}

// yieldFiring gives a firing's claim up for the next cycle when its
// action was held back by deskbot itself, not refused by the desk: a stop
// (SIGTERM, SIGHUP) cut it before its request was sent (sdclient.ErrStopped),
// or its action context ran out while the request waited for deskbot's own
// request budget (sdclient.ErrBudgetWait). Nothing was sent, so the claim
// is released at once instead of held for the lease, with no back-off, and
// the log says so at info: neither is an error (both count as deferred,
// see waiting). It reports whether err was such a case.
func (s *Scheduler) yieldFiring(actx context.Context, cy *cycle, ru *run, alog *slog.Logger, err error) bool {
	var why, msg string
	level := slog.LevelInfo
	switch {
	case errors.Is(err, sdclient.ErrStopped):
		why, msg = ledgerStopped, "stopped, will resume"
	case errors.Is(err, sdclient.ErrBudgetWait) || errors.Is(err, sdclient.ErrListBudgetWait):
		why, msg = ledgerBudgetWait, "waiting for the request budget; the firing goes on next cycle"
	default:
		return false
	}
	// The action context may be the one that ran out (waiting for budget):
	// the release gets time of its own.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(actx), releaseTimeout)
	defer cancel()
	if rerr := s.ledger.Release(rctx, ru.f.ID, time.Time{}, why+": "+err.Error()); rerr != nil {
		alog.Error("release claim; the firing resumes when its lease ends", slog.Any("error", rerr),
			slog.Duration("lease", s.cfg.lease))
	}
	alog.Log(actx, level, msg, slog.Any("error", err), slog.Int("attempt", ru.f.Attempts))
	return true
}

// releaseTimeout bounds the release of a firing whose action context ran out.
const releaseTimeout = 10 * time.Second

// What the ledger's last error of a firing released by yieldFiring starts
// with, for /ticket why and rules why to show plainly (see ledgerLine).
const (
	ledgerStopped    = "stopped by a shutdown"
	ledgerBudgetWait = "waited for deskbot's request budget"
)

// ErrNotDelivered may be wrapped by a Notifier's error to say that the
// alert was certainly not posted (the chat refused it), so that the firing
// can be released and retried at once.
var ErrNotDelivered = errors.New("alert not delivered")

// Retry delays of a firing whose action was refused: the first retry
// comes after retryBase (the next poll at the default interval), and each
// further one waits twice as long, up to retryMax, so that a refusal that
// will not go away (a deactivated agent, a closed channel, a missing
// permission) costs a request an hour instead of one a minute.
const (
	retryBase = time.Minute
	retryMax  = time.Hour
)

// retryDelay is how long a firing refused at its attempt-th attempt waits.
// A refusal for the rate limit is retried on the next cycle: the budget,
// not the action, was the problem.
func retryDelay(err error, attempt int) time.Duration {
	if errors.Is(err, sdclient.ErrRateLimited) || errors.Is(err, sdclient.ErrStopped) {
		return 0
	}
	d := retryBase
	for i := 1; i < attempt && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// notSent reports whether err guarantees that the action never reached its
// target: refused before sending, or answered with a 4xx (429 included).
// A 5xx, a network error or a timeout after sending may have been applied.
func notSent(err error) bool {
	if errors.Is(err, sdclient.ErrNotRetried) {
		return false
	}
	if errors.Is(err, sdclient.ErrInvalidInput) || errors.Is(err, ErrNotDelivered) || errors.Is(err, sdclient.ErrStopped) {
		return true
	}
	var apiErr *sdclient.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500
}

// renderedNow is action i of a firing with its text rendered when it is
// performed: a note after a page that went out a minute after the cycle
// began says so ("paged at {{ now() }}"), and until() counts from then.
// The ticket is the one decided on; only the clock moves. When the clock
// has not moved a second since the cycle began, the text is as decided.
func (s *Scheduler) renderedNow(cy *cycle, ru *run, i int) rules.Action {
	a := ru.d.Actions[i]
	at := s.cfg.clock.Now()
	if at.Sub(cy.now) < time.Second || ru.d.Ticket == nil {
		return a
	}
	acts, err := cy.set.RenderActions(ru.r, ru.d.Ticket, at)
	if err != nil || len(acts) != len(ru.d.Actions) || acts[i].Kind != a.Kind {
		return a // as decided: it rendered then
	}
	return acts[i]
}

// perform does one action. It returns the ticket after an update.
func (s *Scheduler) perform(ctx context.Context, cy *cycle, r *rules.Rule, f rules.Firing, t *sdclient.Ticket, a rules.Action, marker string) (*sdclient.Ticket, error) {
	switch a.Kind {
	case rules.ActionNote:
		m, err := s.marks(ctx)
		if err != nil {
			return nil, err
		}
		_, resp, err := cy.desk.AddNote(ctx, t.ID, &sdclient.NoteRequest{Body: withMarker(m, a.Text, marker), Private: true})
		s.count(cy, resp, err)
		return nil, err
	case rules.ActionReply:
		m, err := s.marks(ctx)
		if err != nil {
			return nil, err
		}
		_, resp, err := cy.desk.Reply(ctx, t.ID, &sdclient.ReplyRequest{Body: withMarker(m, a.Text, marker)})
		s.count(cy, resp, err)
		return nil, err
	case rules.ActionAlert:
		err := s.notifier.Alert(ctx, Alert{Channel: a.Channel, Text: a.Text, Mention: a.Mention, Rule: r.Name, Key: marker, Ticket: t})
		if err != nil {
			return nil, fmt.Errorf("alert %s: %w", a.Channel, err)
		}
		return nil, nil
	case rules.ActionPage:
		return nil, s.startPage(ctx, cy, r, f, t.ID, a)
	case rules.ActionDM:
		return nil, s.sendDM(ctx, cy, r, t, a, marker)
	case rules.ActionUpdate:
		u, err := s.resolveUpdate(ctx, cy, a)
		if err != nil {
			return nil, err
		}
		if u.Tags != nil {
			// The desk replaces the whole tag list on update; a rule's
			// `set: {tags: [...]}` adds its tags to the ticket's own.
			tags := mergeTags(t.Tags, *u.Tags)
			u.Tags = &tags
		}
		nt, resp, err := cy.desk.UpdateTicket(ctx, t.ID, &u)
		s.count(cy, resp, err)
		if err != nil {
			return nil, err
		}
		return nt, nil
	}
	return nil, fmt.Errorf("unknown action kind %q", a.Kind)
}

// agentID resolves an assign: e-mail (cached per cycle).
func (s *Scheduler) agentID(ctx context.Context, cy *cycle, email string) (int64, error) {
	if id, ok := cy.agents[email]; ok {
		return id, nil
	}
	ag, resp, err := cy.desk.AgentByEmail(ctx, email)
	s.count(cy, resp, err)
	if err != nil {
		return 0, fmt.Errorf("assign to %s: %w", email, err)
	}
	cy.agents[email] = ag.ID
	return ag.ID, nil
}

// alreadyThere reports whether the action carrying marker already reached
// its target: a note or reply with the marker among the ticket's
// conversations, or an alert the notifier already posted.
//
// A desk that sanitises HTML drops the marker comment. So when no
// conversation of the ticket carries any deskbot marker, a note or reply
// also counts as there when a conversation of the same kind written since
// the firing started (less the clock skew allowed between desk and
// deskbot) has the action's text. On a desk that keeps markers, only the
// marker counts: an identical note written by a person, or by another
// rule, then never hides a missing one.
func (s *Scheduler) alreadyThere(ctx context.Context, cy *cycle, ticketID int64, f rules.Firing, a rules.Action, marker string, convs *[]*sdclient.Conversation) (bool, error) {
	switch a.Kind {
	case rules.ActionAlert:
		ck, ok := s.notifier.(AlertChecker)
		if !ok {
			return false, nil // cannot tell: the alert may be posted twice
		}
		return ck.AlreadyAlerted(ctx, a.Channel, marker)
	case rules.ActionNote, rules.ActionReply:
		if *convs == nil {
			list, err := s.conversations(ctx, cy, ticketID)
			if err != nil {
				return false, err
			}
			*convs = list
		}
		m, err := s.marks(ctx)
		if err != nil {
			return false, err
		}
		// Only the signed mark proves the action happened: the marker
		// comment is guessable, and anyone may write on the ticket. What
		// a requester wrote (incoming) says nothing about whether this
		// desk keeps markers either.
		markers := false
		tag := m.FiringTag(marker)
		for _, c := range *convs {
			if strings.Contains(c.Body, tag) || strings.Contains(c.BodyText, tag) {
				return true, nil
			}
			markers = markers || (!c.Incoming && (strings.Contains(c.Body, markerPrefix) || hasAnyTag(c.Body) || hasAnyTag(c.BodyText)))
		}
		if markers || f.Started.IsZero() {
			return false, nil
		}
		since, text := f.Started.Add(-markerlessSkew), plainText(a.Text)
		for _, c := range *convs {
			isNote := c.Source == sdclient.ConversationSourceNote
			if isNote == (a.Kind == rules.ActionNote) && !c.Incoming && !c.CreatedAt.Before(since) &&
				(plainText(c.BodyText) == text || plainText(c.Body) == text) {
				return true, nil
			}
		}
	}
	return false, nil
}

// markerlessSkew is how far the desk's clock may lag deskbot's when a
// conversation without a marker is matched to a firing by time and text.
const markerlessSkew = time.Minute

// plainText is s as words separated by single spaces, HTML entities
// decoded, so that the desk's body_text of a note compares equal to the
// text deskbot sent.
func plainText(s string) string {
	return strings.Join(strings.Fields(dropTags(html.UnescapeString(s))), " ")
}

// conversations reads every conversation of a ticket.
func (s *Scheduler) conversations(ctx context.Context, cy *cycle, id int64) ([]*sdclient.Conversation, error) {
	const perPage = 100
	var out []*sdclient.Conversation
	for page := 1; page <= 1000; page++ {
		list, resp, err := cy.desk.ListConversations(ctx, id, &sdclient.ListOptions{Page: page, PerPage: perPage})
		s.count(cy, resp, err)
		if err != nil {
			return nil, fmt.Errorf("list conversations of ticket %d: %w", id, err)
		}
		out = append(out, list...)
		if len(list) < perPage {
			break
		}
	}
	if out == nil {
		out = []*sdclient.Conversation{}
	}
	return out, nil
}

func describeActions(as []rules.Action) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		switch a.Kind {
		case rules.ActionAlert:
			parts = append(parts, fmt.Sprintf("alert %s %q", a.Channel, a.Text))
		case rules.ActionNote, rules.ActionReply:
			parts = append(parts, fmt.Sprintf("%s %q", a.Kind, a.Text))
		case rules.ActionPage:
			parts = append(parts, fmt.Sprintf("page %s in %s %q", a.Policy, a.Channel, a.Text))
		case rules.ActionDM:
			parts = append(parts, fmt.Sprintf("dm %s (else %s) %q", a.To, a.Channel, a.Text))
		case rules.ActionUpdate:
			s := "update"
			if a.AssignEmail != "" {
				s += " assign " + a.AssignEmail
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// mergeTags returns have followed by the tags of add it lacks, compared
// case-insensitively as the desk's tag filter does.
func mergeTags(have, add []string) []string {
	out := append([]string{}, have...)
	seen := make(map[string]bool, len(have)+len(add))
	for _, t := range have {
		seen[strings.ToLower(t)] = true
	}
	for _, t := range add {
		if k := strings.ToLower(t); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}
