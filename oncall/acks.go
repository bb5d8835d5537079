package oncall

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Ack records that by (an e-mail or Slack user id) acknowledged page key at
// now: the escalation stops and a private note on the ticket says who and
// when. ok is false when the page was already acknowledged; the returned
// page then says by whom.
func (e *Escalator) Ack(ctx context.Context, key, by string, now time.Time) (Page, bool, error) {
	return e.ack(ctx, key, by, AckViaAck, now)
}

// Take is Ack for the card's Take it button: the bot assigns the ticket to
// by, and the note says the page was taken.
func (e *Escalator) Take(ctx context.Context, key, by string, now time.Time) (Page, bool, error) {
	return e.ack(ctx, key, by, AckViaTake, now)
}

func (e *Escalator) ack(ctx context.Context, key, by, via string, now time.Time) (Page, bool, error) {
	if by == "" {
		return Page{}, false, fmt.Errorf("acknowledge page %s: empty acknowledger", key)
	}
	p, won, err := e.update(ctx, key, func(q *Page) bool {
		if !q.Ack(by, now) {
			return false
		}
		q.AckVia = via
		return true
	})
	if err != nil {
		return Page{}, false, fmt.Errorf("acknowledge: %w", err)
	}
	if !won {
		return p, false, nil
	}
	e.m.acks.WithLabelValues(p.Policy).Inc()
	e.m.timeToAck.WithLabelValues(p.Policy).Observe(p.AckedAt.Sub(p.StartedAt).Seconds())
	var st TickStats
	nerr := e.note(ctx, p, now, &st)
	if cur, ok, gerr := e.store.Page(ctx, key); gerr == nil && ok {
		p = cur
	}
	return p, true, nerr
}

// AckTicket acknowledges every page of ticket ticketID that nobody has
// acknowledged and whose ticket is not resolved, still escalating or
// exhausted (the /oncall ack N command), and returns them; none means there
// was nothing to acknowledge.
func (e *Escalator) AckTicket(ctx context.Context, ticketID int64, by string, now time.Time) ([]Page, error) {
	pages, err := e.store.TicketPages(ctx, ticketID)
	if err != nil {
		return nil, fmt.Errorf("acknowledge ticket %d: %w", ticketID, err)
	}
	var out []Page
	var errs []error
	for _, p := range pages {
		if p.Acked() || p.Resolved() {
			continue
		}
		q, ok, err := e.Ack(ctx, p.Key, by, now)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			out = append(out, q)
		}
	}
	return out, errors.Join(errs...)
}

// TicketPages returns the pages of ticket ticketID, newest first: the
// chat checks who may acknowledge each before acknowledging it.
func (e *Escalator) TicketPages(ctx context.Context, ticketID int64) ([]Page, error) {
	pages, err := e.store.TicketPages(ctx, ticketID)
	if err != nil {
		return nil, fmt.Errorf("pages of ticket %d: %w", ticketID, err)
	}
	return pages, nil
}

// Resolve stops page key because its ticket was resolved at now; the chat
// (a StopNotifier) redraws the card.
func (e *Escalator) Resolve(ctx context.Context, key string, now time.Time) (bool, error) {
	p, won, err := e.update(ctx, key, func(q *Page) bool { return !q.Stopped() && q.Resolve(now) })
	if err != nil {
		return false, fmt.Errorf("resolve: %w", err)
	}
	if won {
		e.stopped(ctx, p)
	}
	return won, nil
}

// ResolveTicket stops every escalating page of ticketID (the ticket was
// resolved or closed) and says how many it stopped.
func (e *Escalator) ResolveTicket(ctx context.Context, ticketID int64, now time.Time) (int, error) {
	pages, err := e.store.TicketPages(ctx, ticketID)
	if err != nil {
		return 0, fmt.Errorf("resolve ticket %d: %w", ticketID, err)
	}
	n := 0
	for _, p := range pages {
		if p.Stopped() {
			continue
		}
		won, err := e.Resolve(ctx, p.Key, now)
		if err != nil {
			return n, err
		}
		if won {
			n++
		}
	}
	return n, nil
}

// EscalateNow makes the next level of page key due at now and takes the
// step at once (the card's Escalate now button). ok is false when the page
// is stopped or a step is being sent.
func (e *Escalator) EscalateNow(ctx context.Context, key, by string, now time.Time) (bool, error) {
	p, won, err := e.update(ctx, key, func(q *Page) bool { return q.EscalateNow(by, now) })
	if err != nil {
		return false, fmt.Errorf("escalate: %w", err)
	}
	if !won {
		return false, nil
	}
	return true, e.process(ctx, p, now)
}

// Page reads page key, for the card and for /ticket why.
func (e *Escalator) Page(ctx context.Context, key string) (Page, bool, error) {
	return e.store.Page(ctx, key)
}
