package backtest

import (
	"cmp"
	"context"
	"errors"
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

// ErrNoHistory is Run's error when nothing has been recorded yet.
var ErrNoHistory = errors.New("no history recorded yet: deskbot records the desk's changes while it runs (DESKBOT_HISTORY), so run it first and backtest later")

// The desk's own supervisor: it runs its rules every hour over the tickets
// updated in the last 30 days.
const (
	SupervisorEvery  = time.Hour
	SupervisorWindow = 30 * 24 * time.Hour
)

// Option configures Run.
type Option func(*config)

type config struct {
	cycleCap   int
	supervisor bool
}

// WithCycleCap bounds the firings per cycle across rules, as
// DESKBOT_MAX_FIRINGS_PER_CYCLE does for the scheduler (0: none).
func WithCycleCap(n int) Option { return func(c *config) { c.cycleCap = n } }

// WithSupervisor also replays each rule as the desk's hourly supervisor
// would run it, and reports how much later its firings came.
func WithSupervisor(on bool) Option { return func(c *config) { c.supervisor = on } }

// Run replays set over the history h from from (the history's start at
// the earliest) to to, and reports what the rules would have done.
func Run(ctx context.Context, set *rules.Set, h history.Reader, from, to time.Time, opts ...Option) (*Report, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	start, err := h.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("backtest: read the history's start: %w", err)
	}
	if start.IsZero() {
		return nil, ErrNoHistory
	}
	from = plan.Later(from, start)
	if !from.Before(to) {
		return nil, fmt.Errorf("backtest: nothing to replay between %s and %s (the history starts at %s)", plan.Stamp(from), plan.Stamp(to), plan.Stamp(start))
	}
	main := newReplay(set, cfg, false, from)
	reps := []*replay{main}
	var sup *replay
	if cfg.supervisor {
		sup = newReplay(set, cfg, true, from)
		reps = append(reps, sup)
	}
	records := 0
	seen := map[int64]bool{}
	err = h.Scan(ctx, start, to, func(rec history.Record) error {
		if rec.Ticket == nil {
			return nil
		}
		for _, r := range reps {
			if err := r.until(ctx, rec.At); err != nil {
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
	rep := main.report(start, to)
	rep.Records, rep.Tickets = records, len(seen)
	if sup != nil {
		last := map[string]time.Time{}
		for i, rule := range sup.rules {
			last[rule.Name] = sup.lastRun[i]
		}
		compareSupervisor(rep, sup.firings, last)
	}
	return rep, nil
}

// replay is one run of a rules file over the history: the mirror as the
// feed would have kept it, an in-memory ledger, and each rule's clock.
type replay struct {
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

// send is what a cycle's firings of one rule sent.
type send struct {
	rule string
	at   time.Time
	Totals
}

func newReplay(set *rules.Set, cfg config, supervisor bool, from time.Time) *replay {
	r := &replay{set: set, rules: set.Rules(), cfg: cfg, supervisor: supervisor, from: from,
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

// tickFor is the scheduler's tick: the greatest common divisor of the
// rules' intervals in whole seconds, with a minute for cron rules.
func tickFor(rs []*rules.Rule) time.Duration {
	g := int64(0)
	for _, r := range rs {
		iv := int64(60)
		if r.Cron == "" {
			iv = max(int64(cmp.Or(r.Every, rules.DefaultEvery)/time.Second), 1)
		}
		for b := iv; b != 0; {
			g, b = b, g%b
		}
	}
	if g == 0 {
		return rules.DefaultEvery
	}
	return time.Duration(g) * time.Second
}

// apply puts rec into the mirror.
func (r *replay) apply(rec history.Record) {
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
func (r *replay) clock() time.Time {
	var t time.Time
	for _, n := range r.next {
		if !n.IsZero() && (t.IsZero() || n.Before(t)) {
			t = n
		}
	}
	return t
}

// until runs the cycles due before t.
func (r *replay) until(ctx context.Context, t time.Time) error {
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
func (r *replay) cycle(ctx context.Context, now time.Time) error {
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
func (r *replay) nextRun(rule *rules.Rule, now time.Time) time.Time {
	if r.supervisor {
		return now.Add(SupervisorEvery)
	}
	return plan.NextRun(rule, store.RuleRun{Rule: rule.Name, Schedule: plan.ScheduleKey(rule), Since: r.from, LastRun: now}, true, now)
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

// streaks notes since when each ticket the rule decided on matches it,
// and forgets the tickets it no longer matches.
func (r *replay) streaks(rule *rules.Rule, i int, ds []rules.Decision, matching map[int64]bool, now time.Time) {
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
func (r *replay) matchSince(rule *rules.Rule, prev time.Time, t *sdclient.Ticket, now time.Time) time.Time {
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
func (r *replay) fire(ds []rules.Decision, now time.Time) (held map[string]bool) {
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
func (r *replay) ledgerView(ds []rules.Decision) plan.LedgerView {
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
func (r *replay) admit(ds []rules.Decision, view plan.LedgerView, now time.Time) (admitted []rules.Decision, grouped, held map[string]bool) {
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
func (r *replay) record(d rules.Decision, now time.Time) Firing {
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

// sortFirings orders firings by time, rule file order, then ticket.
func sortFirings(set *rules.Set, fs []Firing) {
	order := map[string]int{}
	for i, r := range set.Rules() {
		order[r.Name] = i
	}
	slices.SortStableFunc(fs, func(a, b Firing) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(order[a.Rule], order[b.Rule]), cmp.Compare(a.TicketID, b.TicketID))
	})
}

// earlier is the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
