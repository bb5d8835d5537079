package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// TicketReader reads one ticket (ClientDesk satisfies it).
type TicketReader interface {
	GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error)
}

// FiringStates is the cheap read of the ledger (*store.Store implements
// it). Explanations read it; with it, the scheduler also skips decisions
// the ledger already shows as fired before re-reading their ticket.
type FiringStates interface {
	FiringState(ctx context.Context, key rules.FiringKey) (store.FiringInfo, bool, error)
}

// Explainer answers `/ticket why N` and `deskbot rules why`: for one live
// ticket, every rule, whether its query and `if` hold with the values that
// decided, and what the ledger says of its episode and when the rule can
// fire next.
type Explainer struct {
	desk   TicketReader
	rules  func() *rules.Set
	ledger FiringStates
	now    func() time.Time
}

// NewExplainer returns an Explainer reading tickets from desk (give it the
// interactive client: a person is waiting) and the rules set returns, which
// may change between calls (SIGHUP) or be nil (no rules loaded). A nil
// ledger leaves the ledger out of the answer; a nil now is time.Now.
func NewExplainer(desk TicketReader, set func() *rules.Set, ledger FiringStates, now func() time.Time) *Explainer {
	if now == nil {
		now = time.Now
	}
	return &Explainer{desk: desk, rules: set, ledger: ledger, now: now}
}

// Explain reads ticket ticketID and explains it (deskbot rules why).
func (e *Explainer) Explain(ctx context.Context, ticketID int64) (string, error) {
	if e.rules() == nil {
		return noRules, nil
	}
	t, _, err := e.desk.GetTicket(ctx, ticketID)
	if err != nil {
		if errors.Is(err, sdclient.ErrNotFound) {
			return "", fmt.Errorf("ticket %d not found: %w", ticketID, err)
		}
		return "", err
	}
	return e.ExplainTicket(ctx, t)
}

const noRules = "No rules are loaded (set DESKBOT_RULES or add rules.yaml)."

// ExplainTicket explains a ticket the caller has just read (bot.Explainer:
// /ticket why reads the ticket anyway, to check the caller may see it).
func (e *Explainer) ExplainTicket(ctx context.Context, t *sdclient.Ticket) (string, error) {
	set := e.rules()
	if set == nil {
		return noRules, nil
	}
	now := e.now()
	var b strings.Builder
	fmt.Fprintf(&b, "Ticket #%d %q at %s, rules of %s:\n\n", t.ID, t.Subject, now.UTC().Format(time.RFC3339), set.File())
	if err := rules.WriteExplanation(&b, set.Explain(t, now)); err != nil {
		return "", err
	}
	if e.ledger == nil {
		return b.String(), nil
	}
	b.WriteString("\nLedger:\n")
	for _, r := range set.Rules() {
		info, ok, err := e.ledger.FiringState(ctx, rules.FiringKey{Rule: r.Name, TicketID: t.ID})
		if err != nil {
			return "", fmt.Errorf("read the ledger for rule %q: %w", r.Name, err)
		}
		b.WriteString("  " + ledgerLine(r, info, ok) + "\n")
	}
	return b.String(), nil
}

// ledgerLine says in one line what the ledger knows of a rule on a ticket.
func ledgerLine(r *rules.Rule, info store.FiringInfo, ok bool) string {
	if !ok {
		return fmt.Sprintf("%s: never fired; can fire on the next poll where it holds", r.Name)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s: episode %d ", r.Name, info.Episode)
	if info.Open {
		s.WriteString("open")
	} else {
		fmt.Fprintf(&s, "ended %s", stamp(info.EpisodeEnded))
	}
	switch info.State {
	case store.StatePending:
		fmt.Fprintf(&s, ", firing %d pending since %s (actions done: %v", info.Seq, stamp(info.ClaimedAt), info.Done)
		if info.Attempts > 1 {
			fmt.Fprintf(&s, ", %d attempts", info.Attempts)
		}
		s.WriteString(")")
		if info.LastError != "" {
			fmt.Fprintf(&s, "; last attempt refused: %s", info.LastError)
		}
	case store.StateDone:
		fmt.Fprintf(&s, ", fired %s", stamp(info.FiredAt))
	}
	if !info.Open {
		if r.Once.Mode == rules.OnceTicket && !info.LastFiredAt.IsZero() {
			s.WriteString("; once: ticket, so it never fires again")
		} else {
			s.WriteString("; can fire again when it holds")
		}
		return s.String()
	}
	if next, can := info.NextEligible(r.Once); can {
		fmt.Fprintf(&s, "; can fire again from %s", stamp(next))
	} else if r.Once.Mode == rules.OnceTicket {
		s.WriteString("; once: ticket, so it never fires again")
	} else {
		s.WriteString("; fires again only after a complete poll in which it no longer holds")
	}
	return s.String()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
