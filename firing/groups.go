package firing

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

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
func (ex *execution) flushGroups(ctx context.Context) int {
	order := map[string]int{}
	for i, r := range ex.Set.Rules() {
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
			fired += ex.postGroup(ctx, k, groups[k])
		}
	}
	return fired
}

// postGroup posts the alerts waiting at k as one message, records each as
// done and goes on with each  Fewer than the rule's group_over (the
// others went stale, or were posted before a crash) are posted alone.
func (ex *execution) postGroup(ctx context.Context, k groupKey, members []*run) int {
	slices.SortFunc(members, func(a, b *run) int { return cmp.Compare(a.t.ID, b.t.ID) })
	r := members[0].r
	fired := 0
	gn, groups := ex.d.Notifier.(GroupNotifier)
	if !groups || len(members) <= plan.GroupOver(r) {
		for _, ru := range members {
			ru.alone[k.action] = true
			fired += ex.goOn(ctx, ru)
		}
		return fired
	}
	a := members[0].d.Actions[k.action]
	group := AlertGroup{Channel: a.Channel, Rule: r.Name, Alerts: make([]Alert, 0, len(members))}
	for _, ru := range members {
		m := ru.d.Actions[k.action]
		group.Alerts = append(group.Alerts, Alert{Channel: m.Channel, Text: m.Text, Mention: m.Mention, Rule: r.Name,
			Key: Marker(ru.f, k.action), Ticket: ru.t})
	}
	log := ex.Log.With(slog.String("rule", r.Name), slog.String("channel", a.Channel), slog.Int("tickets", len(members)))
	actx, cancel := ex.actionContext(ctx)
	defer cancel()
	if err := gn.AlertGroup(actx, group); err != nil {
		err = fmt.Errorf("alert %s (one message for %d tickets): %w", a.Channel, len(members), err)
		for _, ru := range members {
			ex.actionFailed(actx, ru, k.action, err)
		}
		return 0
	}
	ex.d.Metrics.AlertGroups.WithLabelValues(r.Name).Inc()
	log.Info("posted one message for the rule's alerts of this cycle", slog.Int("group_over", plan.GroupOver(r)))
	for _, ru := range members {
		ex.d.Metrics.Actions.WithLabelValues(string(rules.ActionAlert), "ok").Inc()
		if err := ex.d.Ledger.ActionDone(actx, ru.f.ID, k.action); err != nil {
			ru.log.Error("record action done; the firing resumes when its lease ends", slog.Any("error", err),
				slog.String("action", string(rules.ActionAlert)), slog.Int("index", k.action))
			continue
		}
		ru.done[k.action] = true
		ru.next = k.action + 1
		fired += ex.goOn(ctx, ru)
	}
	return fired
}

// goOn performs the rest of a firing that waited for its group, and keeps
// the cycle's view of its ticket current. It returns 1 when the firing
// finished.
func (ex *execution) goOn(ctx context.Context, ru *run) int {
	before := ru.updated
	out := ex.proceed(ctx, ru)
	if ru.updated != nil && ru.updated != before {
		ex.reads.Put(ru.updated)
		ex.d.Source.Observe(ru.updated)
		ex.noteCascade(ru.updated, ru.decided, ru.r.Name)
	}
	if out == finished {
		return 1
	}
	return 0
}
