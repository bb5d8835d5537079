package backtest

import (
	"cmp"
	"context"
	"errors"
	"slices"
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

// replay is one run of a rules file over the history: the mirror as the
// feed would have kept it, an in-memory ledger, and each rule's clock. It
// gives the reports the first engine gave (oracle_test.go), cycle for
// cycle, without its two costs: evaluating every due rule over every
// ticket, and sorting the whole backlog, every cycle.
//
//   - Evaluation is incremental (verdicts): a rule's run asks again only
//     about the tickets changed since its last run (the change log) and
//     those whose answer may have changed with time (its timers: a
//     verdict's until, the ledger's re-fire time under once: every, the
//     supervisor's 30-day window). Every other ticket's answer is the one
//     it had.
//   - The queue is incremental (queue.go): each rule keeps its open
//     decisions in heaps by the queue's two orders, and a cycle plans only
//     the head of the queue that can still be admitted.
type replay struct {
	set        *rules.Set
	rules      []*rules.Rule
	cfg        config
	supervisor bool // the desk's hourly supervisor: every hour, last 30 days' tickets, no caps
	from       time.Time
	tick       time.Duration // how soon a rule a cap held back runs again

	next    []time.Time // each rule's next run
	lastRun []time.Time

	// The mirror, by slot: a ticket keeps its slot when it is gone and
	// comes back, as the ledger keeps its records.
	slots   map[int64]int32    // ticket id -> slot
	tickets []*sdclient.Ticket // nil while gone
	at      []int64            // when its current version was recorded (unix ns)
	ver     []uint32           // bumped at every change; 1 is the first version
	// queueVer is, by slot, the version that last changed the queue's
	// fields (fieldQueue): a decision put in the queue at a later
	// version keeps its place
	queueVer []uint32
	log      []int32      // the slots changed, in order (from logBase on)
	logMask  []fieldClass // by log entry: the classes of fields the change changed (fields.go)
	others   []fieldClass // the classes of fields read by the rules that read fieldOther
	logBase  int

	rs      []*ruleState         // by rule, in file order
	st      [][]tstate           // the rules' states, slot-major, by blocks of stateBlock slots: slot*len(rules) + rule
	kinds   [][]rules.ActionKind // by rule: its actions' kinds
	ruleIdx map[string]int

	cycles   int
	fired    chunked[fired] // compact while replaying; firings at the end
	ids      []int64        // by slot: the ticket's id
	sup      supFirings     // the supervisor's instead, smaller still
	firings  []Firing       // built by finish
	sends    []send         // what the cycles' firings sent, per rule and day
	lastSend []int          // by rule: 1 + its last send's index, 0 for none
	held     map[string]int
	// stillHeld are, by rule, the decisions a cap held back that had not
	// fired when the replay ended: waiting, their tickets still matching
	// the rule at its last run, and dropped, no longer matching.
	stillHeld map[string][2]int

	// scratch, reused by the cycles
	rest      sdclient.Ticket // changeOf's
	u, a      merger          // plan's
	prefix    []rules.Decision
	rendered  map[rules.FiringKey]bool
	since     map[rules.FiringKey]time.Time
	asks      [][]int32 // by slot: the rules that ask about it in this cycle
	touched   []int32   // the slots asked about
	due       []*rules.Rule
	render    []*rules.Rule
	renderIdx []int32
	errs      []error
	vs        []verdict
	group     []int
	one       [1]*rules.Rule // matchSince's
	vbuf      rules.VerdictBuf
	vs1       []verdict
}

// fired is a firing as the replay keeps it: 24 bytes, where a Firing
// takes 80 (30 days at the cap are 2 million of them); its time is its
// cycle's (chunked's marks).
type fired struct {
	rule, episode, slot int32
	since               int64 // unix ns
}

// send is what a cycle's firings of one rule sent.
type send struct {
	rule string
	at   time.Time
	Totals
}

func newReplay(set *rules.Set, cfg config, supervisor bool, from time.Time) *replay {
	r := &replay{set: set, rules: set.Rules(), cfg: cfg, supervisor: supervisor, from: from,
		slots: map[int64]int32{}, held: map[string]int{}, ruleIdx: map[string]int{}}
	r.tick = tickFor(r.rules)
	r.next = make([]time.Time, len(r.rules))
	r.lastRun = make([]time.Time, len(r.rules))
	r.lastSend = make([]int, len(r.rules))
	if supervisor {
		r.sup = newSupFirings(len(r.rules))
	}
	for i, rule := range r.rules {
		reads, query := readsOf(rule)
		r.rs = append(r.rs, newRuleState(i, rule, reads, query, &r.st, len(r.rules)))
		r.ruleIdx[rule.Name] = i
		r.kinds = append(r.kinds, rule.ActionKinds())
		if supervisor {
			r.rs[i].uw.less, r.rs[i].uf.less = nil, nil // it fires them all, in no order: plain lists
			r.next[i] = from
			continue
		}
		r.next[i] = plan.NextRun(rule, store.RuleRun{}, false, from) // every: at once; cron: its next time
	}
	r.others = readersOfOther(r.rs)
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

// changeOf is the classes of fields rec changes in the mirror (fields.go):
// every class for a ticket new, gone or back.
func (r *replay) changeOf(rec history.Record) fieldClass {
	if s, ok := r.slots[rec.Ticket.ID]; ok && !rec.Gone && r.tickets[s] != nil {
		return changed(r.tickets[s], rec.Ticket, r.others, &r.rest)
	}
	return fieldAll
}

// apply puts rec into the mirror and notes the change in the log, with
// mask, the classes of fields it changed (changeOf).
func (r *replay) apply(rec history.Record, mask fieldClass) {
	id := rec.Ticket.ID
	s, ok := r.slots[id]
	if !ok {
		if rec.Gone {
			return
		}
		s = int32(len(r.tickets))
		r.slots[id] = s
		r.ids = append(r.ids, id)
		r.tickets = append(r.tickets, nil)
		r.at = append(r.at, 0)
		r.ver = append(r.ver, 0)
		r.queueVer = append(r.queueVer, 0)
		if s%stateBlock == 0 {
			r.st = append(r.st, make([]tstate, stateBlock*len(r.rules)))
		}
	} else if rec.Gone && r.tickets[s] == nil {
		return
	}
	if rec.Gone {
		r.tickets[s] = nil
	} else {
		r.tickets[s], r.at[s] = rec.Ticket, rec.At.UnixNano()
	}
	r.ver[s]++
	if mask&fieldQueue != 0 {
		r.queueVer[s] = r.ver[s]
	}
	r.log = append(r.log, s)
	r.logMask = append(r.logMask, mask)
}

// trimLog drops the part of the log every rule has read.
func (r *replay) trimLog() {
	low := r.logBase + len(r.log)
	for _, rs := range r.rs {
		low = min(low, rs.logPos)
	}
	if n := low - r.logBase; n > 1<<16 && n > len(r.log)/2 {
		r.log = r.log[:copy(r.log, r.log[n:])]
		r.logMask = r.logMask[:copy(r.logMask, r.logMask[n:])]
		r.logBase = low
	}
}

// clock is the time of the next cycle: the earliest next run.
func (r *replay) clock() time.Time { return earliest(r.next) }

// earliest is the earliest of ts that is set (zero: none is).
func earliest(ts []time.Time) time.Time {
	var t time.Time
	for _, n := range ts {
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
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.cycle(now); err != nil {
			return err
		}
	}
}

// cycle runs the rules due at now, as the scheduler's cycle does: evaluate
// (what may have changed), plan (caps, classes, grouping), fire what is
// admitted; the episodes of the tickets that no longer match ended when
// their verdict turned.
func (r *replay) cycle(now time.Time) error {
	r.cycles++
	var dueIdx []int
	for i := range r.rules {
		if !r.next[i].After(now) {
			dueIdx = append(dueIdx, i)
		}
	}
	r.evaluate(dueIdx, now)
	var held map[int]bool
	if r.supervisor {
		if err := r.fireAll(dueIdx, now); err != nil {
			return err
		}
	} else {
		var err error
		if held, err = r.plan(dueIdx, now); err != nil {
			return err
		}
	}
	for _, i := range dueIdx {
		rule := r.rules[i]
		r.lastRun[i] = now
		r.next[i] = r.nextRun(rule, now)
		if held[i] {
			r.next[i] = earlier(r.next[i], now.Add(r.tick)) // the backlog drains at the next tick
		}
	}
	r.trimLog()
	return nil
}

// evaluate asks the due rules again about the tickets whose answer may
// have changed since each rule's last run, one verdicts call per ticket
// for all the rules that ask about it, and updates the rules' states
// (streaks, episodes, queues) with the answers.
func (r *replay) evaluate(dueIdx []int, now time.Time) {
	ns := now.UnixNano()
	stamp := stampOf(r.cycles, phaseAsked)
	if len(r.asks) < len(r.tickets) {
		r.asks = append(r.asks, make([][]int32, len(r.tickets)-len(r.asks))...)
	}
	r.touched = r.touched[:0]
	// The due rules that read the log from the same place (those of one
	// interval, and all of the supervisor's) read it together.
	group := append(r.group[:0], dueIdx...)
	slices.SortStableFunc(group, func(a, b int) int { return cmp.Compare(r.rs[a].logPos, r.rs[b].logPos) })
	for len(group) > 0 {
		n := 1
		for n < len(group) && r.rs[group[n]].logPos == r.rs[group[0]].logPos {
			n++
		}
		r.gather(group[:n], stamp)
		group = group[n:]
	}
	r.group = group[:0]
	end := r.logBase + len(r.log)
	for _, i := range dueIdx {
		r.timersDue(i, stamp, ns)
		r.rs[i].logPos = end
	}
	for _, s := range r.touched {
		r.askAbout(s, now, ns)
	}
}

// ask notes that rule i asks about the ticket in slot s in this cycle.
func (r *replay) ask(s int32, i int) {
	if len(r.asks[s]) == 0 {
		r.touched = append(r.touched, s)
	}
	r.asks[s] = append(r.asks[s], int32(i))
}

// gather notes the tickets the rules of group, which read the log from
// the same place, ask about as changed since their last run in a field
// they read: ticket by ticket, so that the rules' states of one ticket
// are read side by side.
func (r *replay) gather(group []int, stamp uint32) {
	n := len(r.rules)
	from := r.rs[group[0]].logPos - r.logBase
	for k, s := range r.log[from:] {
		mask, ver := r.logMask[from+k], r.ver[s]
		blk, base := r.st[s/stateBlock], int(s%stateBlock)*n
		for _, i := range group {
			st := &blk[base+i]
			if mask&r.rs[i].reads == 0 && (!r.supervisor || st.inWindow) {
				// None of the fields it reads changed: the same answer.
				// The supervisor's also depends on the 30-day window,
				// which a change (of updated_at) moves later: the same
				// answer too when the last one was in the window (if the
				// ticket left it since, that answer did not hold, or a
				// timer at the window's end would have asked again).
				continue
			}
			if st.qFails && mask&r.rs[i].qreads == 0 {
				// Its query did not hold, and none of the fields the
				// query reads changed: it still does not. (Nor does the
				// supervisor's 30-day window matter then.)
				continue
			}
			if st.seen != ver && st.stamp != stamp {
				st.stamp = stamp
				r.ask(s, i)
			}
		}
	}
}

// timersDue notes the tickets rule i asks about as their timer is due.
func (r *replay) timersDue(i int, stamp uint32, ns int64) {
	rs := r.rs[i]
	for len(rs.timers) > 0 && rs.timers[0].at <= ns {
		e := rs.popTimer()
		st := rs.state(e.slot)
		if st.timerAt != e.at {
			continue // stale: a later verdict set another time
		}
		rs.clearTimer(e.slot)
		if st.stamp != stamp {
			st.stamp = stamp
			r.ask(e.slot, i)
		}
	}
}

// askAbout asks the rules that ask about the ticket in slot s, in one
// verdicts call, and updates their states with the answers.
func (r *replay) askAbout(s int32, now time.Time, ns int64) {
	ks := r.asks[s]
	due := r.due[:0]
	for _, k := range ks {
		due = append(due, r.rules[k])
	}
	vs, in := r.verdictsOn(r.tickets[s], due, now, r.vs[:0])
	if !r.supervisor { // the supervisor's fireAll renders what it fires, and fails what fails
		r.checkRender(ks, s, vs, now)
	}
	for n, k := range ks {
		if r.supervisor {
			r.rs[k].state(s).inWindow = in
		}
		r.answer(r.rs[k], s, vs[n], now, ns)
	}
	r.due, r.vs = due, vs
	r.asks[s] = ks[:0]
}

// verdictsOn are due's verdicts on t at now, and whether t is there and,
// for the supervisor, in its 30-day window: none for a ticket gone or out
// of the window until it changes.
func (r *replay) verdictsOn(t *sdclient.Ticket, due []*rules.Rule, now time.Time, vs []verdict) ([]verdict, bool) {
	if t == nil || (r.supervisor && t.UpdatedAt.Add(SupervisorWindow).Before(now)) {
		for range due {
			vs = append(vs, verdict{})
		}
		return vs, false
	}
	vs = verdicts(r.set, &r.vbuf, due, t, now, vs)
	if r.supervisor { // in the window until 30 days after its update
		out := t.UpdatedAt.Add(SupervisorWindow).Add(time.Nanosecond)
		for n := range vs {
			// Leaving the window ends a verdict that holds; one that
			// does not stays as it is.
			if (vs[n].Holds && vs[n].Until.IsZero()) || (!vs[n].Until.IsZero() && out.Before(vs[n].Until)) {
				vs[n].Until = out
			}
		}
	}
	return vs, true
}

// answer applies one verdict of rule rs on slot s.
func (r *replay) answer(rs *ruleState, s int32, v verdict, now time.Time, ns int64) {
	st := rs.state(s)
	sameVersion := st.seen == r.ver[s]
	st.seen = r.ver[s]
	was := st.holds
	st.holds, st.qFails = v.Holds, v.QueryFails
	st.failed = v.Err != nil || (v.Holds && st.renderFailed(st.seen))
	rs.clearTimer(s)
	quiet := st.quietUntil // the last verdict said no until then, on this version
	st.quietUntil = 0
	if !v.Until.IsZero() {
		rs.setTimer(s, v.Until.UnixNano())
		if !v.Holds {
			st.quietUntil = v.Until.UnixNano()
		}
	}
	switch {
	case v.Holds && !was && r.supervisor:
		st.streak = ns // its firings keep no since: the bisection would be wasted
	case v.Holds && !was:
		if !sameVersion {
			quiet = 0
		}
		st.streak = r.matchSince(rs.rule, r.lastRun[rs.i], s, now, quiet).UnixNano()
	case !v.Holds && was:
		st.streak = 0
		st.epOpen = false // the episode ends: the ticket no longer matches
	}
	if st.inQ && v.Holds && was && st.failed == st.qFailed && r.queueVer[s] <= st.qVer {
		return // in the queue at the same place: its entries stand
	}
	r.requeue(rs, s, ns)
}

// nextRun is when rule runs after a run at now.
func (r *replay) nextRun(rule *rules.Rule, now time.Time) time.Time {
	if r.supervisor {
		return now.Add(SupervisorEvery)
	}
	return plan.NextRun(rule, store.RuleRun{Rule: rule.Name, Schedule: plan.ScheduleKey(rule), Since: r.from, LastRun: now}, true, now)
}
