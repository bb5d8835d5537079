package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/sdclient"
)

// What a digest rule says, computed from tickets at a given time: pure,
// so that the digests' runs (bot/follow) and their previews (`rules plan`,
// `rules test`, `rules why`) give the same answer.

// DigestReport is what a digest rule says at one run: counts of its open
// tickets by status, priority and group, the oldest unassigned, and what
// breaches (due_by) within its window. It is computed from the mirror: no
// desk request.
type DigestReport struct {
	Rule    string        // the digest rule
	Channel string        // where it goes (alias resolved)
	At      time.Time     // the run's time
	Within  time.Duration // the breach window
	Total   int           // open tickets of the digest
	// ByStatus, ByPriority and ByGroup count the tickets, most first.
	ByStatus, ByPriority, ByGroup []DigestCount
	// Unassigned are the oldest unassigned tickets, oldest first (at most
	// the rule's list:); UnassignedTotal counts them all.
	Unassigned      []*sdclient.Ticket
	UnassignedTotal int
	// Breaching are the tickets due by At+Within (overdue ones first),
	// soonest first, at most list:; BreachingTotal counts them all and
	// Overdue those already past due.
	Breaching      []*sdclient.Ticket
	BreachingTotal int
	Overdue        int
}

// DigestCount is one line of a digest's counts.
type DigestCount struct {
	Name string
	N    int
}

// Empty reports whether the digest has nothing to say: no open ticket.
func (r DigestReport) Empty() bool { return r.Total == 0 }

// DigestPreview is what a digest rule would post at its next run, over
// the tickets as they are now: `rules plan` and `rules test` show it.
type DigestPreview struct {
	Digest *Digest
	Next   time.Time    // its next run after now
	Report DigestReport // what that run would post (At is Next)
}

// PreviewDigests previews every digest rule of set over tickets: when it
// runs next after now and what it would post then. Groups are named by
// people (nil: by id).
func PreviewDigests(set *Set, tickets []*sdclient.Ticket, now time.Time, people People) []DigestPreview {
	if set == nil {
		return nil
	}
	var out []DigestPreview
	for _, d := range set.Digests() {
		next := d.Next(now)
		out = append(out, DigestPreview{Digest: d, Next: next, Report: d.Report(tickets, next, people)})
	}
	return out
}

// Next is the digest's first run after now (its cron, or now plus its
// every).
func (d *Digest) Next(now time.Time) time.Time {
	if d.Cron != "" {
		if sched, err := cron.ParseStandard(d.Cron); err == nil {
			return sched.Next(now)
		}
	}
	return now.Add(cmp.Or(d.Every, DefaultEvery))
}

// Names of the status and priority codes in a digest.
var (
	digestStatus   = map[int]string{2: "Open", 3: "Pending", 4: "Resolved", 5: "Closed"}
	digestPriority = map[int]string{1: "Low", 2: "Medium", 3: "High", 4: "Urgent"}
)

// StatusName names the desk's built-in statuses as a digest does; a
// custom one by number ("status 17").
func StatusName(st int) string {
	return cmp.Or(digestStatus[st], fmt.Sprintf("status %d", st))
}

// Report computes the digest over tickets at now, naming groups with
// people (no request; "group N" until known, and with nil people).
func (d *Digest) Report(tickets []*sdclient.Ticket, now time.Time, people People) DigestReport {
	r := DigestReport{Rule: d.Name, Channel: d.Channel, At: now, Within: d.Within}
	status, prio, group := map[string]int{}, map[string]int{}, map[string]int{}
	var unassigned, breaching []*sdclient.Ticket
	horizon := now.Add(d.Within)
	for _, t := range tickets {
		if t == nil || t.Status == sdclient.StatusResolved || t.Status == sdclient.StatusClosed || !d.Matches(t) {
			continue
		}
		r.Total++
		status[StatusName(t.Status)]++
		prio[cmp.Or(digestPriority[t.Priority], fmt.Sprintf("priority %d", t.Priority))]++
		group[groupName(people, t.GroupID)]++
		if t.ResponderID == nil || *t.ResponderID == 0 {
			unassigned = append(unassigned, t)
		}
		if t.DueBy != nil && !t.DueBy.IsZero() && !t.DueBy.After(horizon) {
			breaching = append(breaching, t)
			if t.DueBy.Before(now) {
				r.Overdue++
			}
		}
	}
	r.ByStatus, r.ByPriority, r.ByGroup = digestCounts(status), digestCounts(prio), digestCounts(group)
	slices.SortFunc(unassigned, func(a, b *sdclient.Ticket) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(breaching, func(a, b *sdclient.Ticket) int {
		return cmp.Or(a.DueBy.Compare(*b.DueBy), cmp.Compare(a.ID, b.ID))
	})
	r.UnassignedTotal, r.BreachingTotal = len(unassigned), len(breaching)
	r.Unassigned = unassigned[:min(d.List, len(unassigned))]
	r.Breaching = breaching[:min(d.List, len(breaching))]
	return r
}

// groupName names a ticket's group for a digest.
func groupName(people People, id *int64) string {
	if id == nil || *id == 0 {
		return "no group"
	}
	if people != nil {
		if g, ok := people.Group(*id); ok && g.Name != "" {
			return g.Name
		}
	}
	return fmt.Sprintf("group %d", *id)
}

// digestCounts sorts counts most first, then by name.
func digestCounts(m map[string]int) []DigestCount {
	out := make([]DigestCount, 0, len(m))
	for k, v := range m {
		out = append(out, DigestCount{Name: k, N: v})
	}
	slices.SortFunc(out, func(a, b DigestCount) int { return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Name, b.Name)) })
	return out
}
