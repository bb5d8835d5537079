package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Storm control: a first run on a busy desk (or a rule that suddenly
// matches hundreds of tickets) must not flood the chat or the desk.
//
//   - Caps. A cycle starts at most max_firings_per_cycle firings of a rule
//     and at most WithMaxFiringsPerCycle across rules. The decisions over a
//     cap are simply not executed: nothing is claimed, their tickets still
//     match, and the rule is due again at the next tick, so the backlog
//     drains a cap per tick. They are counted in
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

// Held says why a decision was not executed in a cycle: a per-cycle cap,
// or its place in the queue (queue.go) when the cycle's time ran out.
type Held struct {
	At time.Time // the cycle's time
	// Cap is "rule": the rule's max_firings_per_cycle; "cycle": the bound
	// across rules; "queue": not capped, but queued behind more urgent or
	// older work when the cycle's share of the request budget ran out.
	Cap   string
	Limit int    // the cap's value (caps only)
	Class string // the decision's class (pages, alerts and direct messages, ...)
}

// String says it in words, for /ticket why and rules why.
func (h Held) String() string {
	if h.Cap == capQueue {
		return fmt.Sprintf("queued in the cycle of %s (class: %s): the request budget of the cycle ran out before its turn; fires in a later cycle, more urgent work first", stamp(h.At), h.Class)
	}
	what := fmt.Sprintf("the rule's max_firings_per_cycle (%d)", h.Limit)
	if h.Cap == capCycle {
		what = fmt.Sprintf("the cap of %d firings per cycle across rules", h.Limit)
	}
	return fmt.Sprintf("held back by %s in the cycle of %s; fires in a later cycle", what, stamp(h.At))
}

// Why a decision can be held back: the caps, and the queue.
const (
	capRule  = "rule"
	capCycle = "cycle"
	capQueue = "queue"
)

// heldBack remembers, per rule, the decisions its last cycle held back.
type heldBack struct {
	mu    sync.Mutex
	rules map[string]map[int64]Held
}

// HeldBack reports whether the last cycle that ran key's rule held the
// decision on key's ticket back by a per-cycle cap (for the explainer:
// see ExplainHeldBack). It is safe to call while cycles run.
func (s *Scheduler) HeldBack(key rules.FiringKey) (Held, bool) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	h, ok := s.held.rules[key.Rule][key.TicketID]
	return h, ok
}

// noteHeld replaces what is remembered of the cycle's rules by what the
// cycle held back.
func (s *Scheduler) noteHeld(due []*rules.Rule, held map[string]map[int64]Held) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	if s.held.rules == nil {
		s.held.rules = map[string]map[int64]Held{}
	}
	for _, r := range due {
		if len(held[r.Name]) == 0 {
			delete(s.held.rules, r.Name)
			continue
		}
		s.held.rules[r.Name] = held[r.Name]
	}
}

// ruleCap is r's max_firings_per_cycle (the default for a rule built
// without the loader).
func ruleCap(r *rules.Rule) int {
	if r == nil || r.MaxFiringsPerCycle <= 0 {
		return rules.DefaultMaxFiringsPerCycle
	}
	return r.MaxFiringsPerCycle
}

// groupOver is r's group_over (the default for a rule built without the
// loader).
func groupOver(r *rules.Rule) int {
	if r.GroupOver <= 0 {
		return rules.DefaultGroupOver
	}
	return r.GroupOver
}

// admission is what storm control decided for a cycle's decisions.
type admission struct {
	admitted map[rules.FiringKey]bool  // decisions the cycle executes
	held     map[string]map[int64]Held // decisions held back by a cap, by rule and ticket
	failed   []rules.Decision          // decisions whose rule failed
	fired    []rules.Decision          // decisions the ledger shows fired already
	perRule  map[string]int            // admitted, by rule
	total    int                       // admitted
	grouping map[string]bool           // rules whose alerts are grouped in this cycle
	// pageGrouping are the rules whose pages this cycle starts without
	// their first step; the cycle then ticks the escalator once, which
	// sends one direct message per person for them all.
	pageGrouping map[string]bool
}

// admit chooses the decisions the cycle executes: not failed, not already
// fired per the ledger, and within the caps, in the queue's order (see
// order: firings under way first, then by class, ticket priority and
// age), and the rules whose alerts and pages are grouped. Pure.
func admit(in planInput, ordered []rules.Decision) admission {
	adm := admission{admitted: map[rules.FiringKey]bool{}, held: map[string]map[int64]Held{}, perRule: map[string]int{},
		grouping: map[string]bool{}, pageGrouping: map[string]bool{}}
	for _, d := range ordered {
		adm.consider(in, d)
	}
	for name, n := range adm.perRule {
		r := in.set.Rule(name)
		if r == nil || n <= groupOver(r) {
			continue
		}
		kinds := r.ActionKinds()
		if slices.Contains(kinds, rules.ActionPage) {
			adm.pageGrouping[name] = true
		}
		if in.groups && slices.Contains(kinds, rules.ActionAlert) {
			adm.grouping[name] = true
		}
	}
	return adm
}

// consider admits d unless it failed, was admitted already, the ledger
// shows it fired, or a cap holds it back (noted in held).
func (adm *admission) consider(in planInput, d rules.Decision) {
	key := keyOf(d)
	switch {
	case d.Err != nil:
		adm.failed = append(adm.failed, d)
		return
	case adm.admitted[key]:
		return
	case in.ledger.alreadyFired(d, in.now):
		adm.fired = append(adm.fired, d)
		return
	}
	limit, over := ruleCap(in.set.Rule(d.Rule)), ""
	switch {
	case adm.perRule[d.Rule] >= limit:
		over = capRule
	case in.cycleCap > 0 && adm.total >= in.cycleCap:
		over, limit = capCycle, in.cycleCap
	}
	if over != "" {
		if adm.held[d.Rule] == nil {
			adm.held[d.Rule] = map[int64]Held{}
		}
		adm.held[d.Rule][d.TicketID] = Held{At: in.now, Cap: over, Limit: limit, Class: classOf(in.set.Rule(d.Rule)).String()}
		return
	}
	adm.admitted[key] = true
	adm.perRule[d.Rule]++
	adm.total++
}

// notePlan counts and logs what planning decided: failed decisions, those
// already fired, those the caps held back.
func (s *Scheduler) notePlan(cy *cycle, p *plan) {
	for _, d := range p.failed {
		s.noteFailed(cy, d)
	}
	for _, d := range p.fired {
		s.m.decisions.WithLabelValues(d.Rule, "already_fired").Inc()
	}
	for name, held := range p.held {
		n := float64(len(held))
		s.m.decisions.WithLabelValues(name, "deferred").Add(n)
		s.m.deferredByCap.WithLabelValues(name).Add(n)
		cy.log.Info("per-cycle cap reached: the rest of the rule's firings wait for the next cycles",
			slog.String("rule", name), slog.Int("firing", p.perRule[name]), slog.Int("held_back", len(held)),
			slog.Int("rule_cap", ruleCap(cy.set.Rule(name))), slog.Int("cycle_cap", s.cfg.maxFirings))
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
	if !ok || len(members) <= groupOver(r) {
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
			Key: Marker(ru.f, k.action), Ticket: ru.t})
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
	log.Info("posted one message for the rule's alerts of this cycle", slog.Int("group_over", groupOver(r)))
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
		ex.reads.fresh[ru.t.ID] = ru.updated
		s.observe(ru.updated)
		s.noteCascade(ex, ru.updated, ru.decided, ru.r.Name)
	}
	if out == finished {
		return 1
	}
	return 0
}
