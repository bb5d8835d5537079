package plan

import (
	"cmp"
	"slices"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Who goes first. A cycle's decisions form a queue, admitted by the caps
// and executed in this order (Order):
//
//   - firings under way (a crash interrupted them) first;
//   - then by class (ClassOf): pages, then alerts and direct messages,
//     then updates and notes, then public replies (e-mails), then digests
//     and rules with priority: low;
//   - then by ticket priority, urgent (4) first;
//   - then by age: the decision waiting longest (since the first cycle
//     that decided it without executing it), then the oldest ticket.
//
// One place in RoutineShare goes to the longest-waiting decision whatever
// its class, so routine work keeps a share and never starves behind a
// stream of urgent work.
//
// The scheduler executes the queue only while the next ticket's firings
// can start before its next tick is due, at the background budget's
// pace: what is left waits, said to be queued (Held with CapQueue), and
// the next cycle syncs the feed first, so a new urgent match goes ahead of
// the work already queued instead of waiting behind it, and the feed keeps
// its interval while a backlog drains.

// Class is how urgent a firing is: lower goes first.
type Class int

const (
	ClassPage   Class = iota // pages, and rules with priority: high
	ClassAlert               // alerts and direct messages
	ClassUpdate              // updates and notes, and rules with priority: normal
	ClassReply               // public replies: they e-mail the requester
	ClassDigest              // digests, and rules with priority: low
)

func (c Class) String() string {
	switch c {
	case ClassPage:
		return "pages"
	case ClassAlert:
		return "alerts and direct messages"
	case ClassUpdate:
		return "updates and notes"
	case ClassReply:
		return "public replies"
	}
	return "digests"
}

// RoutineShare: one firing in this many is the longest-waiting one,
// whatever its class.
const RoutineShare = 5

// ClassOf is the class of r's firings: its priority: when set, else its
// most urgent action's.
func ClassOf(r *rules.Rule) Class {
	if r == nil {
		return ClassUpdate
	}
	switch r.Priority {
	case rules.PriorityHigh:
		return ClassPage
	case rules.PriorityNormal:
		return ClassUpdate
	case rules.PriorityLow:
		return ClassDigest
	}
	c := ClassDigest
	for _, k := range r.ActionKinds() {
		c = min(c, KindClass(k))
	}
	return c
}

// KindClass is the class of one action.
func KindClass(k rules.ActionKind) Class {
	switch k {
	case rules.ActionPage:
		return ClassPage
	case rules.ActionAlert, rules.ActionDM:
		return ClassAlert
	case rules.ActionReply:
		return ClassReply
	}
	return ClassUpdate // notes, updates
}

// queued is one decision in the queue, with what orders it.
type queued struct {
	d     rules.Decision
	begun bool
	cls   Class
	prio  int
	since time.Time
	born  time.Time // the ticket's created_at
	file  int       // the rule's place in the file
}

// Order returns decisions in the order the cycle admits and executes
// them (see the top of this file): begun are the firings under way, since
// when each decision left waiting has waited (absent: since now). Pure.
func Order(set *rules.Set, now time.Time, ds []rules.Decision, begun map[rules.FiringKey]bool, since map[rules.FiringKey]time.Time) []rules.Decision {
	items := make([]queued, len(ds))
	for i, d := range ds {
		key := rules.FiringKey{Rule: d.Rule, TicketID: d.TicketID}
		rule := set.Rule(d.Rule)
		q := queued{d: d, begun: begun[key], cls: ClassOf(rule), since: now}
		if rule != nil {
			q.file = rule.Place()
		}
		if at, ok := since[key]; ok {
			q.since = at
		}
		if d.Ticket != nil {
			q.prio, q.born = d.Ticket.Priority, d.Ticket.CreatedAt
		}
		items[i] = q
	}
	// The comparisons take pointers: a queued, with its decision, is too
	// large to copy twice per comparison.
	older := func(a, b *queued) int {
		return cmp.Or(a.since.Compare(b.since), a.born.Compare(b.born), cmp.Compare(a.d.TicketID, b.d.TicketID), cmp.Compare(a.file, b.file))
	}
	begunFirst := func(a, b *queued) int {
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
		a, b := &items[i], &items[j]
		return cmp.Or(begunFirst(a, b), cmp.Compare(a.cls, b.cls), cmp.Compare(b.prio, a.prio), older(a, b))
	})
	age := indexes(len(items))
	slices.SortStableFunc(age, func(i, j int) int { return cmp.Or(begunFirst(&items[i], &items[j]), older(&items[i], &items[j])) })

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
		if (len(out)+1)%RoutineShare == 0 {
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
