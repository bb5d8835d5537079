package backtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// The oracle is the replay as it was first written: every cycle evaluates
// every due rule over the whole mirror and plans the whole backlog with
// plan.Make. It is slow (the whole backlog is sorted every cycle) but
// plainly the scheduler's cycle; TestEngineMatchesOracle holds the
// incremental engine (replay.go) to its reports.

// runOracle replays set over the history h from from (the history's start at
// the earliest) to to, and reports what the rules would have done.
func runOracle(ctx context.Context, set *rules.Set, h history.Reader, from, to time.Time, opts ...Option) (*Report, error) {
	cfg, start, from, err := window(ctx, h, from, to, opts)
	if err != nil {
		return nil, err
	}
	main := newOracle(set, cfg, false, from)
	reps := []*oracle{main}
	var sup *oracle
	if cfg.supervisor {
		sup = newOracle(set, cfg, true, from)
		reps = append(reps, sup)
	}
	records := 0
	seen := map[int64]bool{}
	err = h.Scan(ctx, start, to, func(rec history.Record) error {
		if rec.Ticket == nil {
			return nil
		}
		for _, r := range reps {
			if err := r.until(ctx, seenAfter(rec.At, from)); err != nil {
				return err
			}
			r.apply(rec)
		}
		if !rec.At.Before(from) {
			records++
		}
		seen[rec.Ticket.ID] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backtest: replay the history: %w", err)
	}
	for _, r := range reps {
		if err := r.until(ctx, to); err != nil {
			return nil, fmt.Errorf("backtest: replay the history: %w", err)
		}
	}
	rep := main.asReplay().report(start, to)
	rep.Records, rep.Tickets = records, len(seen)
	if sup != nil {
		last := map[string]time.Time{}
		for i, rule := range sup.rules {
			last[rule.Name] = sup.lastRun[i]
		}
		compareSupervisorOracle(rep, sup.firings, last)
	}
	return rep, nil
}

// oracle is the first engine, kept to check the incremental one (replay): one run of a rules file over the history: the mirror as the
// feed would have kept it, an in-memory ledger, and each rule's clock.
type oracle struct {
	set        *rules.Set
	rules      []*rules.Rule
	cfg        config
	supervisor bool // the desk's hourly supervisor: every hour, last 30 days' tickets, no caps
	from       time.Time
	tick       time.Duration // how soon a rule a cap held back runs again

	next    []time.Time // each rule's next run
	lastRun []time.Time

	mirror []*sdclient.Ticket
	index  map[int64]int       // ticket id -> position in mirror
	at     map[int64]time.Time // ticket id -> when its current version was recorded

	ledger   map[string]map[int64]*rules.FiringRecord // by rule and ticket
	open     map[string]map[int64]*rules.FiringRecord // the open episodes among them
	waiting  map[rules.FiringKey]time.Time            // since when a held decision waits
	matching map[string]map[int64]time.Time           // since when a ticket matches a rule (this streak)
	firingID int64

	cycles  int
	firings []Firing
	sends   []send // what the cycles' firings sent, per rule and cycle
	held    map[string]int
}

func newOracle(set *rules.Set, cfg config, supervisor bool, from time.Time) *oracle {
	r := &oracle{set: set, rules: set.Rules(), cfg: cfg, supervisor: supervisor, from: from,
		index: map[int64]int{}, at: map[int64]time.Time{},
		ledger: map[string]map[int64]*rules.FiringRecord{}, open: map[string]map[int64]*rules.FiringRecord{},
		waiting: map[rules.FiringKey]time.Time{}, matching: map[string]map[int64]time.Time{}, held: map[string]int{}}
	r.tick = tickFor(r.rules)
	r.next = make([]time.Time, len(r.rules))
	r.lastRun = make([]time.Time, len(r.rules))
	for i, rule := range r.rules {
		r.ledger[rule.Name] = map[int64]*rules.FiringRecord{}
		r.open[rule.Name] = map[int64]*rules.FiringRecord{}
		r.matching[rule.Name] = map[int64]time.Time{}
		if supervisor {
			r.next[i] = from
			continue
		}
		r.next[i] = plan.NextRun(rule, store.RuleRun{}, false, from) // every: at once; cron: its next time
	}
	return r
}

// apply puts rec into the mirror.
func (r *oracle) apply(rec history.Record) {
	id := rec.Ticket.ID
	i, ok := r.index[id]
	switch {
	case rec.Gone && ok:
		last := len(r.mirror) - 1
		r.mirror[i] = r.mirror[last]
		r.index[r.mirror[i].ID] = i
		r.mirror = r.mirror[:last]
		delete(r.index, id)
		delete(r.at, id)
	case rec.Gone:
	case ok:
		r.mirror[i] = rec.Ticket
		r.at[id] = rec.At
	default:
		r.index[id] = len(r.mirror)
		r.mirror = append(r.mirror, rec.Ticket)
		r.at[id] = rec.At
	}
}

// clock is the time of the next cycle: the earliest next run.
func (r *oracle) clock() time.Time { return earliest(r.next) }

// until runs the cycles due before t.
func (r *oracle) until(ctx context.Context, t time.Time) error {
	for {
		now := r.clock()
		if now.IsZero() || !now.Before(t) || now.Before(r.from) {
			return nil
		}
		if err := r.cycle(ctx, now); err != nil {
			return err
		}
	}
}

// cycle runs the rules due at now, as the scheduler's cycle does: evaluate,
// plan (caps, classes, grouping), fire what is admitted, end the episodes
// of the tickets that no longer match.
func (r *oracle) cycle(ctx context.Context, now time.Time) error {
	r.cycles++
	var due []*rules.Rule
	var dueIdx []int
	for i, rule := range r.rules {
		if !r.next[i].After(now) {
			due = append(due, rule)
			dueIdx = append(dueIdx, i)
		}
	}
	tickets := r.mirror
	if r.supervisor {
		tickets = recent(r.mirror, now)
	}
	ds, err := plan.Evaluate(ctx, r.set, due, tickets, now)
	if err != nil {
		return err
	}
	matching := map[string]map[int64]bool{}
	for _, d := range ds {
		if matching[d.Rule] == nil {
			matching[d.Rule] = map[int64]bool{}
		}
		matching[d.Rule][d.TicketID] = true
	}
	for k, rule := range due {
		r.streaks(rule, dueIdx[k], ds, matching[rule.Name], now)
	}
	held := r.fire(ds, now)
	for k, rule := range due {
		i := dueIdx[k]
		for id, rec := range r.open[rule.Name] {
			if !matching[rule.Name][id] {
				rec.Open, rec.EpisodeEnded = false, now
				delete(r.open[rule.Name], id)
			}
		}
		r.lastRun[i] = now
		r.next[i] = r.nextRun(rule, now)
		if held[rule.Name] {
			r.next[i] = earlier(r.next[i], now.Add(r.tick)) // the backlog drains at the next tick
		}
	}
	return nil
}

// nextRun is when rule runs after a run at now.
func (r *oracle) nextRun(rule *rules.Rule, now time.Time) time.Time {
	if r.supervisor {
		return now.Add(SupervisorEvery)
	}
	return plan.NextRun(rule, store.RuleRun{Rule: rule.Name, Schedule: plan.ScheduleKey(rule), Since: r.from, LastRun: now}, true, now)
}

// streaks notes since when each ticket the rule decided on matches it,
// and forgets the tickets it no longer matches.
func (r *oracle) streaks(rule *rules.Rule, i int, ds []rules.Decision, matching map[int64]bool, now time.Time) {
	since := r.matching[rule.Name]
	for id := range since {
		if !matching[id] {
			delete(since, id)
		}
	}
	for _, d := range ds {
		if d.Rule != rule.Name {
			continue
		}
		if _, ok := since[d.TicketID]; !ok {
			since[d.TicketID] = r.matchSince(rule, r.lastRun[i], d.Ticket, now)
		}
	}
}

// matchSince is when ticket t began to match rule, found matching at now:
// the moment its current version was recorded if it matched then, else
// (a condition on time, such as now() - ticket.created_at > duration("1h"))
// the first second after which it matched, found by bisection; never
// before the rule's previous run, which saw it not matching.
func (r *oracle) matchSince(rule *rules.Rule, prev time.Time, t *sdclient.Ticket, now time.Time) time.Time {
	lo := plan.Later(r.at[t.ID], prev)
	if !lo.Before(now) {
		return now
	}
	holds := func(at time.Time) bool {
		ds := r.set.EvaluateRule(rule, []*sdclient.Ticket{t}, at)
		return len(ds) > 0
	}
	if holds(lo) {
		return lo
	}
	// Bisect over whole seconds after lo: the answer is the last second
	// at which it did not hold yet (a strict "> 30m" holds just after).
	n := int64((now.Sub(lo) + time.Second - 1) / time.Second) // holds at lo+n s (now, or past it)
	k := sort.Search(int(n), func(k int) bool { return holds(lo.Add(time.Duration(k+1) * time.Second)) })
	return lo.Add(time.Duration(k) * time.Second)
}

// fire plans the cycle's decisions with plan.Make over the in-memory
// ledger and records the firings admitted; it returns the rules a cap
// held back. The supervisor admits every decision its ledger allows.
func (r *oracle) fire(ds []rules.Decision, now time.Time) (held map[string]bool) {
	view := r.ledgerView(ds)
	var admitted []rules.Decision
	grouped := map[string]bool{}
	if r.supervisor {
		for _, d := range ds {
			if d.Err == nil && !view.AlreadyFired(d, now) {
				admitted = append(admitted, d)
			}
		}
	} else {
		admitted, grouped, held = r.admit(ds, view, now)
	}
	r.send(admitted, grouped, now)
	return held
}

// ledgerView is the in-memory ledger's records of the decisions' rules
// and tickets, as plan reads a ledger.
func (r *oracle) ledgerView(ds []rules.Decision) plan.LedgerView {
	view := plan.LedgerView{States: map[string]map[int64]rules.FiringRecord{}}
	for _, d := range ds {
		if rec := r.ledger[d.Rule][d.TicketID]; rec != nil {
			if view.States[d.Rule] == nil {
				view.States[d.Rule] = map[int64]rules.FiringRecord{}
			}
			view.States[d.Rule][d.TicketID] = *rec
		}
	}
	return view
}

// admit plans the decisions as a cycle does (queue order, caps,
// grouping) and returns those admitted, the rules grouped and the rules a
// cap held back, noting since when the held ones wait.
func (r *oracle) admit(ds []rules.Decision, view plan.LedgerView, now time.Time) (admitted []rules.Decision, grouped, held map[string]bool) {
	// The decisions the ledger shows fired already in their episode
	// are left out of planning: plan.Make would set them aside
	// (Admission.Fired) without counting them against a cap, so the
	// plan is the same, and the queue's sort has less to do.
	open := ds[:0:0]
	for _, d := range ds {
		if !view.AlreadyFired(d, now) {
			open = append(open, d)
		}
	}
	p := plan.Make(plan.Input{Set: r.set, Now: now, Decisions: open, Ledger: view, Since: r.waiting,
		CycleCap: r.cfg.cycleCap, Groups: true})
	for _, d := range p.Ordered {
		if p.Admitted[plan.Key(d)] {
			admitted = append(admitted, d)
		}
	}
	held = map[string]bool{}
	for rule, ids := range p.Held {
		held[rule] = len(ids) > 0
		r.held[rule] += len(ids)
		for id := range ids {
			key := rules.FiringKey{Rule: rule, TicketID: id}
			if _, ok := r.waiting[key]; !ok {
				r.waiting[key] = now
			}
		}
	}
	return admitted, p.Grouping, held
}

// record enters d's firing at now into the ledger, opening an episode
// when none is open, and returns it.
func (r *oracle) record(d rules.Decision, now time.Time) Firing {
	rec := r.ledger[d.Rule][d.TicketID]
	if rec == nil {
		rec = &rules.FiringRecord{Key: plan.Key(d)}
		r.ledger[d.Rule][d.TicketID] = rec
	}
	if !rec.Open {
		rec.Episode++
		rec.Open, rec.EpisodeStarted, rec.EpisodeEnded, rec.Seq = true, now, time.Time{}, 0
		r.open[d.Rule][d.TicketID] = rec
	}
	r.firingID++
	rec.FiringID, rec.Seq, rec.State = r.firingID, rec.Seq+1, rules.FiringDone
	rec.ClaimedAt, rec.FiredAt, rec.LastFiredAt, rec.Attempts = now, now, now, 1
	since, ok := r.matching[d.Rule][d.TicketID]
	if !ok {
		since = now
	}
	return Firing{Rule: d.Rule, TicketID: d.TicketID, At: now, MatchingSince: since, Episode: rec.Episode}
}

// kindsOf are the kinds of as, in order.
func kindsOf(as []rules.Action) []rules.ActionKind {
	ks := make([]rules.ActionKind, len(as))
	for i, a := range as {
		ks[i] = a.Kind
	}
	return ks
}

// send records the admitted firings and what they would have sent, per
// rule in file order (the report is stable).
func (r *oracle) send(admitted []rules.Decision, grouped map[string]bool, now time.Time) {
	sent := map[string]*send{}
	for _, d := range admitted {
		f := r.record(d, now)
		r.firings = append(r.firings, f)
		delete(r.waiting, plan.Key(d))
		s := sent[d.Rule]
		if s == nil {
			s = &send{rule: d.Rule, at: now}
			sent[d.Rule] = s
		}
		s.Firings++
		s.count(kindsOf(d.Actions), grouped[d.Rule]) // as rendered
	}
	for _, rule := range r.rules {
		s := sent[rule.Name]
		if s == nil {
			continue
		}
		if grouped[rule.Name] { // one message per alert action for them all
			s.Messages += alertActions(rule)
		}
		r.sends = append(r.sends, *s)
	}
}

// asReplay hands the oracle's results to the report builder.
func (r *oracle) asReplay() *replay {
	still := map[string][2]int{}
	for k := range r.waiting { // held back, not fired since
		n := still[k.Rule]
		if _, ok := r.matching[k.Rule][k.TicketID]; ok {
			n[0]++
		} else {
			n[1]++
		}
		still[k.Rule] = n
	}
	return &replay{set: r.set, rules: r.rules, from: r.from, cycles: r.cycles, firings: r.firings, sends: r.sends, held: r.held, stillHeld: still}
}

// recent are the tickets the supervisor looks at: updated in the last 30 days.
func recent(ts []*sdclient.Ticket, now time.Time) []*sdclient.Ticket {
	out := make([]*sdclient.Ticket, 0, len(ts))
	for _, t := range ts {
		if !t.UpdatedAt.Before(now.Add(-SupervisorWindow)) {
			out = append(out, t)
		}
	}
	return out
}

// compareSupervisorOracle is compareSupervisor as first written, over
// the supervisor's firings as they are: it adds to each rule of rep how the supervisor's replay
// compares: for each of deskbot's firings, the supervisor's first firing
// of the same rule on the same ticket at or after it, before deskbot's
// next firing there; a firing of the supervisor's no firing of deskbot's
// waited for answers deskbot's next one as earlier. A firing after the
// supervisor's last run of the rule (lastRun) is not missed: the replay
// ended before its next hourly run.
func compareSupervisorOracle(rep *Report, sup []Firing, lastRun map[string]time.Time) {
	type key struct {
		rule string
		id   int64
	}
	supBy := map[key][]time.Time{}
	count := map[string]int{}
	for _, f := range sup {
		k := key{f.Rule, f.TicketID}
		supBy[k] = append(supBy[k], f.At)
		count[f.Rule]++
	}
	ours := map[key][]time.Time{}
	for _, f := range rep.Firings {
		k := key{f.Rule, f.TicketID}
		ours[k] = append(ours[k], f.At)
	}
	later, earlier := map[string][]time.Duration{}, map[string][]time.Duration{}
	missed, unreached, same := map[string]int{}, map[string]int{}, map[string]int{}
	unanswered := func(rule string, at time.Time) {
		if lastRun[rule].Before(at) {
			unreached[rule]++
		} else {
			missed[rule]++
		}
	}
	for k, ts := range ours {
		st := supBy[k]
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		slices.SortFunc(st, func(a, b time.Time) int { return a.Compare(b) })
		var waiting, early *time.Time
		for i, j := 0, 0; i < len(ts) || j < len(st); {
			if j == len(st) || (i < len(ts) && !ts[i].After(st[j])) { // deskbot's first at equal times
				at := ts[i]
				i++
				switch {
				case early != nil:
					earlier[k.rule] = append(earlier[k.rule], at.Sub(*early))
					early = nil
				case waiting != nil:
					unanswered(k.rule, *waiting)
					fallthrough
				default:
					waiting = &at
				}
				continue
			}
			at := st[j]
			j++
			if waiting != nil {
				later[k.rule] = append(later[k.rule], at.Sub(*waiting))
				if at.Equal(*waiting) {
					same[k.rule]++
				}
				waiting = nil
			} else {
				early = &at
			}
		}
		if waiting != nil {
			unanswered(k.rule, *waiting)
		}
	}
	for i := range rep.Rules {
		name := rep.Rules[i].Name
		l := latency(later[name])
		rep.Rules[i].Supervisor = &Supervisor{Firings: count[name], Compared: l.N, Missed: missed[name], Unreached: unreached[name], Later: l, SameTime: same[name],
			Earlier: latency(earlier[name])}
	}
	rep.Limits = append(rep.Limits, "the desk's supervisor is replayed as it runs: every hour, over the tickets updated in the last 30 days, without caps")
}
