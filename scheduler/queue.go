package scheduler

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/rules"
)

// budgetWindow is the window of the request budget (per minute).
const budgetWindow = time.Minute

// spentLog is when the scheduler's own desk requests of the last minute
// were counted: from it, and the background budget, a cycle tells whether
// a ticket's firings would wait for budget past the cycle's deadline.
type spentLog struct {
	mu sync.Mutex
	at []time.Time // ascending
}

// add notes n requests at now.
func (l *spentLog) add(now time.Time, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range n {
		l.at = append(l.at, now)
	}
	l.trim(now)
}

func (l *spentLog) trim(now time.Time) {
	drop := 0
	for drop < len(l.at) && !l.at[drop].After(now.Add(-budgetWindow)) {
		drop++
	}
	l.at = append(l.at[:0], l.at[drop:]...)
}

// freeAt is when need more requests fit in budget requests a minute.
func (l *spentLog) freeAt(now time.Time, need, budget int) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trim(now)
	over := len(l.at) + need - budget
	switch {
	case over <= 0:
		return now
	case over > len(l.at):
		return now.Add(budgetWindow) // more than a minute's budget: an empty window
	}
	return l.at[over-1].Add(budgetWindow)
}

// pace is the queue step's answer for a cycle: until when it starts
// firings, at the background budget's pace.
type pace struct {
	deadline time.Time // zero: never stop (RunCycle)
	budget   int       // the background budget a minute (0: none to plan with)
	spent    *spentLog
	clock    clockwork.Clock
}

// pace is the queue's pace for a cycle in mode at now: a scheduled or
// kicked cycle stops starting firings when its next tick is due.
func (s *Scheduler) pace(mode cycleMode, now time.Time) pace {
	q := pace{budget: s.cfg.budget, spent: &s.spent, clock: s.cfg.clock}
	if mode != once {
		q.deadline = s.deadline(now)
	}
	return q
}

// fits reports whether the admitted firings of a ticket, costing cost
// desk requests, can start before the cycle's deadline: always without one
// (RunCycle) or without a budget to plan with, else when it is not due yet
// and their requests (and one for the next cycle's sync) fit the
// background budget by then.
func (q pace) fits(cost int) bool {
	if q.deadline.IsZero() {
		return true
	}
	now := q.clock.Now()
	if !now.Before(q.deadline) {
		return false
	}
	if q.budget <= 0 {
		return true
	}
	return q.spent.freeAt(now, cost+1, q.budget).Before(q.deadline)
}

// groupCost estimates the desk requests of a ticket's admitted firings:
// its re-read, unless the cycle has it, and each note, reply and update.
func (ex *execution) groupCost(group []rules.Decision) int {
	n := 0
	if len(group) > 0 {
		if _, ok := ex.reads.fresh[group[0].TicketID]; !ok {
			n++
		}
	}
	for _, d := range group {
		r := ex.set.Rule(d.Rule)
		if r == nil || !ex.admitted[keyOf(d)] {
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

// Who goes first. A cycle's decisions form a queue, admitted by the caps
// and executed in this order (order):
//
//   - firings under way (a crash interrupted them) first;
//   - then by class (classOf): pages, then alerts and direct messages,
//     then updates and notes, then public replies (e-mails), then digests
//     and rules with priority: low;
//   - then by ticket priority, urgent (4) first;
//   - then by age: the decision waiting longest (since the first cycle
//     that decided it without executing it), then the oldest ticket.
//
// One place in routineShare goes to the longest-waiting decision whatever
// its class, so routine work keeps a share and never starves behind a
// stream of urgent work.
//
// A scheduled cycle executes the queue only while the next ticket's
// firings can start before its next tick is due (cycle.deadline) at the
// background budget's pace (spentLog predicts the wait from deskbot's own
// requests of the last minute): what is left waits, said to be queued
// (Held with capQueue), and the next cycle syncs the feed first, so a new
// urgent match goes ahead of the work already queued instead of waiting
// behind it, and the feed keeps its interval while a backlog drains.

// class is how urgent a firing is: lower goes first.
type class int

const (
	classPage   class = iota // pages, and rules with priority: high
	classAlert               // alerts and direct messages
	classUpdate              // updates and notes, and rules with priority: normal
	classReply               // public replies: they e-mail the requester
	classDigest              // digests, and rules with priority: low
)

func (c class) String() string {
	switch c {
	case classPage:
		return "pages"
	case classAlert:
		return "alerts and direct messages"
	case classUpdate:
		return "updates and notes"
	case classReply:
		return "public replies"
	}
	return "digests"
}

// routineShare: one firing in this many is the longest-waiting one,
// whatever its class.
const routineShare = 5

// classOf is the class of r's firings: its priority: when set, else its
// most urgent action's.
func classOf(r *rules.Rule) class {
	if r == nil {
		return classUpdate
	}
	switch r.Priority {
	case rules.PriorityHigh:
		return classPage
	case rules.PriorityNormal:
		return classUpdate
	case rules.PriorityLow:
		return classDigest
	}
	c := classDigest
	for _, k := range r.ActionKinds() {
		c = min(c, kindClass(k))
	}
	return c
}

// kindClass is the class of one action.
func kindClass(k rules.ActionKind) class {
	switch k {
	case rules.ActionPage:
		return classPage
	case rules.ActionAlert, rules.ActionDM:
		return classAlert
	case rules.ActionReply:
		return classReply
	}
	return classUpdate // notes, updates
}

// waitQueue remembers since when each decision left waiting has waited:
// the age order of the queue, across cycles.
type waitQueue struct {
	mu    sync.Mutex
	since map[rules.FiringKey]time.Time
}

// queued is one decision in the queue, with what orders it.
type queued struct {
	d     rules.Decision
	begun bool
	cls   class
	prio  int
	since time.Time
	born  time.Time // the ticket's created_at
	file  int       // the rule's place in the file
}

// order returns decisions in the order the cycle admits and executes
// them (see the top of this file): begun are the firings under way, since
// when each decision left waiting has waited (absent: since now). Pure.
func order(set *rules.Set, now time.Time, ds []rules.Decision, begun map[rules.FiringKey]bool, since map[rules.FiringKey]time.Time) []rules.Decision {
	file := map[string]int{}
	for i, r := range set.Rules() {
		file[r.Name] = i
	}
	items := make([]queued, len(ds))
	for i, d := range ds {
		key := rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}
		q := queued{d: d, begun: begun[key], cls: classOf(set.Rule(d.Rule)), file: file[d.Rule], since: now}
		if at, ok := since[key]; ok {
			q.since = at
		}
		if d.Ticket != nil {
			q.prio, q.born = d.Ticket.Priority, d.Ticket.CreatedAt
		}
		items[i] = q
	}
	older := func(a, b queued) int {
		return cmp.Or(a.since.Compare(b.since), a.born.Compare(b.born), cmp.Compare(a.d.TicketID, b.d.TicketID), cmp.Compare(a.file, b.file))
	}
	begunFirst := func(a, b queued) int {
		switch {
		case a.begun == b.begun:
			return 0
		case a.begun:
			return -1
		}
		return 1
	}
	urgency := indexes(len(items))
	slices.SortStableFunc(urgency, func(i, j int) int {
		a, b := items[i], items[j]
		return cmp.Or(begunFirst(a, b), cmp.Compare(a.cls, b.cls), cmp.Compare(b.prio, a.prio), older(a, b))
	})
	age := indexes(len(items))
	slices.SortStableFunc(age, func(i, j int) int { return cmp.Or(begunFirst(items[i], items[j]), older(items[i], items[j])) })

	out := make([]rules.Decision, 0, len(items))
	taken := make([]bool, len(items))
	next := func(list []int, at *int) rules.Decision {
		for taken[list[*at]] {
			*at++
		}
		taken[list[*at]] = true
		return items[list[*at]].d
	}
	u, a := 0, 0
	for len(out) < len(items) {
		if (len(out)+1)%routineShare == 0 {
			out = append(out, next(age, &a))
		} else {
			out = append(out, next(urgency, &u))
		}
	}
	return out
}

// indexes is 0, 1, ..., n-1.
func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// keyOf is d's (rule, ticket).
func keyOf(d rules.Decision) rules.FiringKey {
	return rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}
}

// noteWaiting remembers, for the cycle's rules, since when each decision
// the cycle left waiting (held back by a cap or queued) has waited, and
// sets the queue's gauge.
func (s *Scheduler) noteWaiting(cy *cycle, held map[string]map[int64]Held) {
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	old := s.queue.since
	s.queue.since = map[rules.FiringKey]time.Time{}
	inCycle := map[string]bool{}
	for _, r := range cy.rules {
		inCycle[r.Name] = true
	}
	for k, at := range old {
		if !inCycle[k.Rule] && cy.set.Rule(k.Rule) != nil {
			s.queue.since[k] = at // not decided in this cycle: still waiting
		}
	}
	for rule, ids := range held {
		for id := range ids {
			k := rules.FiringKey{Rule: rule, TicketID: id}
			at, ok := old[k]
			if !ok {
				at = cy.now
			}
			s.queue.since[k] = at
		}
	}
	byClass := map[class]int{}
	for k := range s.queue.since {
		byClass[classOf(cy.set.Rule(k.Rule))]++
	}
	for c := classPage; c <= classDigest; c++ {
		s.m.queued.WithLabelValues(c.String()).Set(float64(byClass[c]))
	}
}

// waitingSince is since when each of ds, and each firing under way in
// begun, waits, for those an earlier cycle left waiting.
func (s *Scheduler) waitingSince(ds []rules.Decision, begun map[string][]int64) map[rules.FiringKey]time.Time {
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	out := map[rules.FiringKey]time.Time{}
	note := func(k rules.FiringKey) {
		if at, ok := s.queue.since[k]; ok {
			out[k] = at
		}
	}
	for _, d := range ds {
		note(keyOf(d))
	}
	for rule, ids := range begun {
		for _, id := range ids {
			note(rules.FiringKey{Rule: rule, TicketID: id})
		}
	}
	return out
}
