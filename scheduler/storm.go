package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// Storm control: a first run on a busy desk (or a rule that suddenly
// matches hundreds of tickets) must not flood the chat or the desk.
//
//   - Caps (plan.Make). A cycle starts at most max_firings_per_cycle
//     firings of a rule and at most WithMaxFiringsPerCycle across rules.
//     The decisions over a cap are simply not executed: nothing is
//     claimed, their tickets still match, and the rule is due again at the
//     next tick, so the backlog drains a cap per tick. They are counted in
//     deskbot_scheduler_deferred_by_cap_total and remembered for the
//     explainer (HeldBack).
//   - Grouping. When a cycle would fire a rule with an alert on more
//     tickets than its group_over, each firing is claimed and performs its
//     actions as usual up to its alert, where it waits; once every ticket
//     of the cycle has been handled, the waiting alerts of each (rule,
//     alert action) are posted as one message (GroupNotifier), every
//     member's alert is recorded as done, and each firing goes on with its
//     remaining actions. The message carries every member's key, so a
//     member resumed after a crash or a lost answer finds its alert posted
//     (AlreadyAlerted) and records it as done, exactly as a single alert.

// heldBack remembers, per rule, the decisions its last cycle held back.
type heldBack struct {
	mu    sync.Mutex
	rules map[string]map[int64]plan.Held
}

// HeldBack reports whether the last cycle that ran key's rule held the
// decision on key's ticket back by a per-cycle cap (for the explainer:
// see ExplainHeldBack). It is safe to call while cycles run.
func (s *Scheduler) HeldBack(key rules.FiringKey) (plan.Held, bool) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	h, ok := s.held.rules[key.Rule][key.TicketID]
	return h, ok
}

// noteHeld replaces what is remembered of the cycle's rules by what the
// cycle held back.
func (s *Scheduler) noteHeld(due []*rules.Rule, held map[string]map[int64]plan.Held) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	if s.held.rules == nil {
		s.held.rules = map[string]map[int64]plan.Held{}
	}
	for _, r := range due {
		if len(held[r.Name]) == 0 {
			delete(s.held.rules, r.Name)
			continue
		}
		s.held.rules[r.Name] = held[r.Name]
	}
}

// notePlan counts and logs what planning decided: failed decisions, those
// already fired, those the caps held back.
func (s *Scheduler) notePlan(cy *cycle, p *plan.Plan) {
	for _, d := range p.Failed {
		s.noteFailed(cy, d)
	}
	for _, d := range p.Fired {
		s.m.decisions.WithLabelValues(d.Rule, "already_fired").Inc()
	}
	for name, held := range p.Held {
		n := float64(len(held))
		s.m.decisions.WithLabelValues(name, "deferred").Add(n)
		s.m.deferredByCap.WithLabelValues(name).Add(n)
		cy.log.Info("per-cycle cap reached: the rest of the rule's firings wait for the next cycles",
			slog.String("rule", name), slog.Int("firing", p.PerRule[name]), slog.Int("held_back", len(held)),
			slog.Int("rule_cap", plan.RuleCap(cy.set.Rule(name))), slog.Int("cycle_cap", s.cfg.maxFirings))
	}
}

// groupKey names one grouped message of a cycle: a rule's alert action.
type groupKey struct {
	rule   string
	action int
}

// join makes ru wait at its alert action i for the group's message.
func (ex *execution) join(ru *run, i int) {
	if ex.groups == nil {
		ex.groups = map[groupKey][]*run{}
	}
	k := groupKey{ru.r.Name, i}
	ex.groups[k] = append(ex.groups[k], ru)
}

// flushGroups posts the cycle's grouped alerts, one message per rule and
// alert action, and lets their firings go on; a firing with a second
// grouped alert waits again, so it loops until none waits. It returns how
// many firings finished.
func (s *Scheduler) flushGroups(ctx context.Context, ex *execution) int {
	order := map[string]int{}
	for i, r := range ex.set.Rules() {
		order[r.Name] = i
	}
	fired := 0
	for len(ex.groups) > 0 {
		groups := ex.groups
		ex.groups = nil
		keys := slices.SortedFunc(maps.Keys(groups), func(a, b groupKey) int {
			return cmp.Or(cmp.Compare(order[a.rule], order[b.rule]), cmp.Compare(a.action, b.action))
		})
		for _, k := range keys {
			fired += s.postGroup(ctx, ex, k, groups[k])
		}
	}
	return fired
}

// postGroup posts the alerts waiting at k as one message, records each as
// done and goes on with each firing. Fewer than the rule's group_over (the
// others went stale, or were posted before a crash) are posted alone.
func (s *Scheduler) postGroup(ctx context.Context, ex *execution, k groupKey, members []*run) int {
	slices.SortFunc(members, func(a, b *run) int { return cmp.Compare(a.t.ID, b.t.ID) })
	r := members[0].r
	gn, ok := s.notifier.(GroupNotifier)
	fired := 0
	if !ok || len(members) <= plan.GroupOver(r) {
		for _, ru := range members {
			ru.alone[k.action] = true
			fired += s.goOn(ctx, ex, ru)
		}
		return fired
	}
	a := members[0].d.Actions[k.action]
	g := AlertGroup{Channel: a.Channel, Rule: r.Name, Alerts: make([]Alert, 0, len(members))}
	for _, ru := range members {
		ma := ru.d.Actions[k.action]
		g.Alerts = append(g.Alerts, Alert{Channel: ma.Channel, Text: ma.Text, Mention: ma.Mention, Rule: r.Name,
			Key: firing.Marker(ru.f, k.action), Ticket: ru.t})
	}
	log := ex.log.With(slog.String("rule", r.Name), slog.String("channel", a.Channel), slog.Int("tickets", len(members)))
	actx, cancel := s.actionContext(ctx)
	defer cancel()
	if err := gn.AlertGroup(actx, g); err != nil {
		err = fmt.Errorf("alert %s (one message for %d tickets): %w", a.Channel, len(members), err)
		for _, ru := range members {
			s.actionFailed(actx, ex, ru, k.action, err)
		}
		return 0
	}
	s.m.alertGroups.WithLabelValues(r.Name).Inc()
	log.Info("posted one message for the rule's alerts of this cycle", slog.Int("group_over", plan.GroupOver(r)))
	for _, ru := range members {
		s.m.actions.WithLabelValues(string(rules.ActionAlert), "ok").Inc()
		if err := s.ledger.ActionDone(actx, ru.f.ID, k.action); err != nil {
			ru.log.Error("record action done; the firing resumes when its lease ends", slog.Any("error", err),
				slog.String("action", string(rules.ActionAlert)), slog.Int("index", k.action))
			continue
		}
		ru.done[k.action] = true
		ru.next = k.action + 1
		fired += s.goOn(ctx, ex, ru)
	}
	return fired
}

// goOn performs the rest of a firing that waited for its group, and keeps
// the cycle's view of its ticket current. It returns 1 when the firing
// finished.
func (s *Scheduler) goOn(ctx context.Context, ex *execution, ru *run) int {
	before := ru.updated
	out := s.proceed(ctx, ex, ru)
	if ru.updated != nil && ru.updated != before {
		ex.reads.Put(ru.updated)
		s.observe(ru.updated)
		s.noteCascade(ex, ru.updated, ru.decided, ru.r.Name)
	}
	if out == finished {
		return 1
	}
	return 0
}
