package oncall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ExhaustedNote is the private note that records on the ticket that every
// level and round of the policy was paged and nobody acknowledged; pol is
// nil when the policy left the rules file while the page escalated. It
// names the people the chat could not reach, so that nobody reads "paged"
// where nobody was.
func ExhaustedNote(p Page, pol *Policy) string {
	var s string
	if pol == nil {
		s = fmt.Sprintf("On-call page NOT acknowledged: escalation policy %s was removed from the rules file while it escalated", p.Policy)
	} else {
		s = fmt.Sprintf("On-call page NOT acknowledged: every level of policy %s was paged", p.Policy)
		if pol.Repeat > 0 {
			s += fmt.Sprintf(" %d times", pol.Repeat+1)
		}
	}
	pages := "pages"
	if p.Step == 1 {
		pages = "page"
	}
	s += fmt.Sprintf(" (%d %s from %s), and nobody acknowledged.", p.Step, pages, p.StartedAt.UTC().Format("2006-01-02 15:04 MST"))
	if missed := unreached(p); len(missed) > 0 {
		s += " Could not be reached: " + strings.Join(missed, ", ") + "."
	}
	return s + fmt.Sprintf(" Paging has stopped: this ticket needs an owner; acknowledge with /oncall ack %d.", p.TicketID)
}

// unreached lists the targets of the page's steps that the chat never
// confirmed (refused every attempt, or unreachable), each once.
func unreached(p Page) []string {
	sent := map[int]bool{}
	for _, ev := range p.History {
		if ev.Kind == EventSent {
			sent[ev.Step] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, ev := range p.History {
		if ev.Kind != EventFailed || ev.Step == 0 || sent[ev.Step] || ev.Target == nil || seen[ev.Target.ID] {
			continue
		}
		seen[ev.Target.ID] = true
		out = append(out, ev.Target.ID)
	}
	return out
}

// AckNote is the private note that records an acknowledgement on the
// ticket.
func AckNote(p Page) string {
	verb := "acknowledged"
	if p.AckVia == AckViaTake {
		verb = "taken (assigned to them)"
	}
	s := fmt.Sprintf("On-call page %s by %s at %s", verb, p.AckedBy, p.AckedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	if p.Step > 0 {
		s += fmt.Sprintf(", %s after the first page (policy %s, level %d", fmtDur(p.AckedAt.Sub(p.StartedAt)), p.Policy, p.Level+1)
		if p.Round > 0 {
			s += fmt.Sprintf(", round %d", p.Round+1)
		}
		s += ")"
	}
	return s + "."
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Truncate(time.Second).String()
}

// exhausted follows the swap that exhausted page q (as it was before the
// swap): it counts and logs it (msg says why), then says so at once where
// people look, the ticket's note and the card.
func (e *Escalator) exhausted(ctx context.Context, q Page, now time.Time, st *TickStats, msg string) error {
	st.Exhausted++
	e.m.exhausted.WithLabelValues(q.Policy).Inc()
	e.log.Warn(msg, "page", q.Key, "ticket", q.TicketID, "policy", q.Policy)
	q.Version++
	return e.note(ctx, q, now, st)
}

// note writes the note due on p (the acknowledgement, or that nobody
// acknowledged), claimed like a step so that replicas write it once.
func (e *Escalator) note(ctx context.Context, p Page, now time.Time, st *TickStats) error {
	exhausted := p.ExhaustNoteDue()
	body := AckNote(p)
	if e.desk != nil && !exhausted {
		// The note names the person, as the desk shows its agents.
		if name := e.desk.PersonName(ctx, p.AckedBy); name != "" && name != p.AckedBy {
			q := p.Clone()
			q.AckedBy = fmt.Sprintf("%s (%s)", name, p.AckedBy)
			body = AckNote(q)
		}
	}
	if exhausted {
		body = ExhaustedNote(p, e.Config().Policy(p.Policy))
	}
	q := p.Clone()
	q.Claim(now.Add(e.lease))
	won, err := e.swap(ctx, q)
	if err != nil || !won {
		return err
	}
	if e.desk != nil {
		if err := e.desk.AddNote(ctx, p.TicketID, body); err != nil {
			_, _, uerr := e.update(ctx, p.Key, func(x *Page) bool { return x.NoteFailed(err.Error(), e.retry, now) })
			return errors.Join(fmt.Errorf("note on ticket %d for page %s: %w", p.TicketID, p.Key, err), uerr)
		}
	}
	st.Noted++
	if !exhausted {
		_, _, err = e.update(ctx, p.Key, func(x *Page) bool { return x.Noted(now) })
		return err
	}
	cur, won, err := e.update(ctx, p.Key, func(x *Page) bool { return x.NotedExhausted(now) })
	if won {
		e.stopped(ctx, cur)
	}
	return err
}

// stopped tells the chat, if it listens, that p stopped without a click.
func (e *Escalator) stopped(ctx context.Context, p Page) {
	sn, ok := e.pager.(StopNotifier)
	if !ok {
		return
	}
	if err := sn.PageStopped(ctx, p); err != nil {
		e.log.Warn("on-call: cannot show that the page stopped", "page", p.Key, "ticket", p.TicketID, "err", err)
	}
}
