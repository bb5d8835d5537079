package chat

import (
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// DigestMessage is a digest rule's summary of the open tickets: counts by
// status, priority and group, the oldest unassigned and what breaches
// next. Transports post it, then update the same message for the rest of
// the day.
type DigestMessage struct {
	Rule    string
	Channel string // channel id or #name
	At      time.Time
	Within  time.Duration // the breach window
	Total   int
	// ByStatus, ByPriority and ByGroup are counts, most first.
	ByStatus, ByPriority, ByGroup []Count
	Unassigned                    []*sdclient.Ticket // oldest first
	UnassignedTotal               int
	Breaching                     []*sdclient.Ticket // soonest due first
	BreachingTotal                int
	Overdue                       int
}

// Count is one count of a digest.
type Count struct {
	Name string
	N    int
}

// DigestRef names a posted digest message (channel id and ts).
type DigestRef struct{ Channel, TS string }

// DigestFormat says how a transport writes a digest: esc escapes plain
// text, link(url, label) writes a link (label already escaped), bold
// emphasises.
type DigestFormat struct {
	Esc  func(string) string
	Link func(url, label string) string
	Bold func(string) string
	// TicketURL is a ticket's link, "" when there is none.
	TicketURL func(id int64) string
}

// Lines renders the digest: a title, the counts, and the two lists; a
// digest without tickets says there are none.
func (m DigestMessage) Lines(f DigestFormat) []string {
	title := f.Bold(fmt.Sprintf("Desk digest (%s), %s UTC", f.Esc(m.Rule), m.At.UTC().Format("Mon 2 Jan 15:04")))
	if m.Total == 0 {
		return []string{title, "No open tickets."}
	}
	out := []string{title, fmt.Sprintf("%d open: %s", m.Total, counts(m.ByStatus, f))}
	out = append(out, "By priority: "+counts(m.ByPriority, f), "By group: "+counts(m.ByGroup, f))
	if m.BreachingTotal > 0 {
		head := fmt.Sprintf("Due within %s: %d", roundDur(m.Within), m.BreachingTotal)
		if m.Overdue > 0 {
			head += fmt.Sprintf(" (%d overdue)", m.Overdue)
		}
		out = append(out, f.Bold(head))
		for _, t := range m.Breaching {
			out = append(out, "• "+ticketRef(t, f)+" — due "+dueIn(*t.DueBy, m.At))
		}
	}
	if m.UnassignedTotal > 0 {
		out = append(out, f.Bold(fmt.Sprintf("Unassigned: %d, oldest first", m.UnassignedTotal)))
		for _, t := range m.Unassigned {
			out = append(out, "• "+ticketRef(t, f)+" — opened "+roundDur(m.At.Sub(t.CreatedAt))+" ago")
		}
	}
	return out
}

func counts(cs []Count, f DigestFormat) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d", f.Esc(c.Name), c.N)
	}
	return strings.Join(parts, ", ")
}

func ticketRef(t *sdclient.Ticket, f DigestFormat) string {
	label := fmt.Sprintf("#%d %s", t.ID, f.Esc(Truncate(t.Subject, 80)))
	if u := f.TicketURL(t.ID); u != "" {
		return f.Link(u, label)
	}
	return label
}

// dueIn says when due is, from at: "in 25m" or "3h ago".
func dueIn(due, at time.Time) string {
	if due.Before(at) {
		return roundDur(at.Sub(due)) + " ago"
	}
	return "in " + roundDur(due.Sub(at))
}

// roundDur writes d to the minute: 4h, 2h30m, 25m.
func roundDur(d time.Duration) string {
	d = d.Round(time.Minute)
	if d < time.Minute {
		return "<1m"
	}
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
