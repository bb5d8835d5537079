package plan

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Dry runs and plans: what a cycle would do with its decisions, told the
// way people read it in chat ("would have ..."), with the same storm
// control as a real cycle (the per-rule and per-cycle caps, grouped
// alerts).
//
// A dry run changes nothing on the desk and writes nothing to the ledger,
// so without a memory every cycle would report the same firings again and
// a capped backlog would never seem to drain. The scheduler therefore
// remembers, in memory only (DryMemory), what each dry-run cycle would
// have fired, and treats it as fired in later dry-run cycles (per the
// rule's once:), until a complete cycle shows the ticket no longer
// matching the rule. What a firing's own actions would have changed on
// the ticket (a rule raising the priority another rule watches) is not
// simulated.

// DryMemory is what earlier dry-run cycles would have fired, and when.
type DryMemory map[rules.FiringKey]time.Time

// EndEpisodes forgets what the rules due in a complete cycle no longer
// decide, as the end of their episodes would (once: ticket never ends).
func (m DryMemory) EndEpisodes(set *rules.Set, due []*rules.Rule, decisions []rules.Decision) {
	decided := map[rules.FiringKey]bool{}
	for _, d := range decisions {
		decided[Key(d)] = true
	}
	inCycle := map[string]bool{}
	for _, r := range due {
		inCycle[r.Name] = true
	}
	for k := range m {
		if r := set.Rule(k.Rule); inCycle[k.Rule] && !decided[k] && r != nil && r.Once.Mode != rules.OnceTicket {
			delete(m, k)
		}
	}
}

// Fired reports whether an earlier dry-run cycle would have fired d so
// that it may not fire again at now (as the ledger would record it);
// known is false when no earlier cycle would have fired it.
func (m DryMemory) Fired(d rules.Decision, now time.Time) (fired, known bool) {
	at, ok := m[Key(d)]
	if !ok {
		return false, false
	}
	return !d.Once.MayFire(rules.FiringRecord{Open: true, FiringID: 1, State: rules.FiringDone, FiredAt: at}, now), true
}

// Remember notes what the outlook o of a dry-run cycle at now fires now,
// and returns it, what the rules' caps defer, and the deferred decisions
// as a real cycle's caps would hold them back (by rule and ticket). Rules
// that run later than o.At are left out.
func (m DryMemory) Remember(o Outlook, now time.Time) (fired, deferred []rules.Decision, held map[string]map[int64]Held) {
	held = map[string]map[int64]Held{}
	for _, ro := range o.Rules {
		if ro.Next.After(o.At) {
			continue // not run yet
		}
		for _, d := range ro.Now() {
			fired = append(fired, d)
			m[Key(d)] = now
		}
		for _, d := range ro.Fires[len(ro.Now()):] {
			// As in a real cycle, a rule with firings held back is due
			// again at the next tick, so the dry run drains.
			deferred = append(deferred, d)
			if held[d.Rule] == nil {
				held[d.Rule] = map[int64]Held{}
			}
			held[d.Rule][d.TicketID] = Held{At: now, Cap: CapRule, Limit: ro.RuleCap()}
		}
	}
	return fired, deferred, held
}

// NextRuns is when each rule of due first runs, by NextRun over the rules'
// last runs, now at the earliest: a plan shows each rule at its first run.
func NextRuns(due []*rules.Rule, runs map[string]store.RuleRun, now time.Time) map[string]time.Time {
	out := make(map[string]time.Time, len(due))
	for _, r := range due {
		rec, ok := runs[r.Name]
		out[r.Name] = Later(NextRun(r, rec, ok, now), now)
	}
	return out
}

// AtNextRuns replaces the decisions of the rules of due that run later
// than now (next) by their decisions at their next run, over tickets as
// they are, in set's order. It returns ctx's error when a stop cut the
// evaluation short.
func AtNextRuns(ctx context.Context, set *rules.Set, due []*rules.Rule, tickets []*sdclient.Ticket, decisions []rules.Decision, next map[string]time.Time, now time.Time) ([]rules.Decision, error) {
	laterRules := map[string]bool{}
	out := decisions[:0:0]
	for _, r := range due {
		if at := next[r.Name]; at.After(now) {
			laterRules[r.Name] = true
			ds, err := Evaluate(ctx, set, []*rules.Rule{r}, tickets, at)
			if err != nil {
				return decisions, err
			}
			out = append(out, ds...)
		}
	}
	if len(laterRules) == 0 {
		return decisions, nil
	}
	for _, d := range decisions {
		if !laterRules[d.Rule] {
			out = append(out, d)
		}
	}
	SortDecisions(set, out)
	return out, nil
}
