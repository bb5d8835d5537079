package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// TicketReader reads one ticket (ClientDesk satisfies it).
type TicketReader interface {
	// GetTicket reads ticket id.
	GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error)
}

// Explainer answers `/ticket why N` and `deskbot rules why`: for one live
// ticket, every rule, whether its query and `if` hold with the values that
// decided, and what the ledger says of its episode and when the rule can
// fire next.
type Explainer struct {
	desk   TicketReader
	rules  func() *rules.Set
	ledger firing.FiringStates
	now    func() time.Time
	cfg    explainerConfig
}

// explainerConfig is what ExplainerOptions set.
type explainerConfig struct {
	mirror MirrorReader   // nil: Explain reads the desk
	held   HeldBackReader // nil: caps are not mentioned
	runs   RuleRunReader  // nil: next runs as on a first start
}

// ExplainRuns makes the explanation say when each rule runs next from the
// rules' last runs in r (*store.Store is one): plan.NextRun, the answer the
// scheduler and `rules plan` give too. Without it the next runs are those
// of a first start.
func ExplainRuns(r RuleRunReader) ExplainerOption {
	return func(c *explainerConfig) { c.runs = r }
}

// HeldBackReader tells whether the last cycle of a rule held its decision
// on a ticket back by a per-cycle cap (*Scheduler implements it).
type HeldBackReader interface {
	// HeldBack reports why key was held back in its rule's last cycle.
	HeldBack(key rules.FiringKey) (plan.Held, bool)
}

// ExplainHeldBack makes the explanation say, for a rule whose last cycle
// held the ticket back by a per-cycle cap, that it fires in a later cycle.
// Only the process running the scheduler knows: give it that scheduler.
func ExplainHeldBack(h HeldBackReader) ExplainerOption {
	return func(c *explainerConfig) { c.held = h }
}

// MirrorReader reads the ticket mirror that the scheduler keeps in the
// state store (*store.Store implements it).
type MirrorReader interface {
	// MirrorStates reads every workspace's mirror state.
	MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error)
	// MirrorLoad reads workspace ws's mirror, ordered by ticket id.
	MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error)
}

// ExplainerOption configures NewExplainer.
type ExplainerOption func(*explainerConfig)

// ExplainFromMirror makes Explain read the ticket from the mirror, at no
// desk request, and say how fresh it is; it reads the desk, saying why,
// when the mirror is not built yet, does not hold the ticket, or is more
// than 15 minutes behind (nobody keeps it up to date).
func ExplainFromMirror(m MirrorReader) ExplainerOption {
	return func(c *explainerConfig) { c.mirror = m }
}

// mirrorMaxLag is how far the mirror's cursor may be behind the clock for
// Explain to trust it: the leader moves it every cycle, so a cursor
// further behind means nobody keeps the mirror (no deskbot runs, its
// scheduler stopped, the desk has been failing).
const mirrorMaxLag = 15 * time.Minute

// NewExplainer returns an Explainer reading tickets from desk (give it the
// interactive client: a person is waiting) and the rules set returns, which
// may change between calls (SIGHUP) or be nil (no rules loaded). A nil
// ledger leaves the ledger out of the answer; a nil now is time.Now.
func NewExplainer(desk TicketReader, set func() *rules.Set, ledger firing.FiringStates, now func() time.Time, opts ...ExplainerOption) *Explainer {
	if now == nil {
		now = time.Now
	}
	e := &Explainer{desk: desk, rules: set, ledger: ledger, now: now}
	for _, o := range opts {
		if o != nil {
			o(&e.cfg)
		}
	}
	return e
}

// Explain reads ticket ticketID and explains it (deskbot rules why). With
// a mirror, the answer starts with a line saying where the ticket was
// read from.
func (e *Explainer) Explain(ctx context.Context, ticketID int64) (string, error) {
	if e.rules() == nil {
		return noRules, nil
	}
	var t *sdclient.Ticket
	var source string
	if e.cfg.mirror != nil {
		t, source = e.fromMirror(ctx, ticketID)
	}
	if t == nil {
		var err error
		if t, _, err = e.desk.GetTicket(ctx, ticketID); err != nil {
			if errors.Is(err, sdclient.ErrNotFound) {
				return "", fmt.Errorf("ticket %d not found: %w", ticketID, err)
			}
			return "", err
		}
	}
	s, err := e.ExplainTicket(ctx, t)
	if err != nil || source == "" {
		return s, err
	}
	return source + "\n" + s, nil
}

// fromMirror reads ticket id from the mirror. Without it, source says why
// the ticket is to be read from the desk; with it, how fresh the copy is.
func (e *Explainer) fromMirror(ctx context.Context, id int64) (t *sdclient.Ticket, source string) {
	states, err := e.cfg.mirror.MirrorStates(ctx)
	if err != nil {
		return nil, fmt.Sprintf("Read from the desk: deskbot's mirror could not be read (%v).", err)
	}
	built := false
	for _, st := range states {
		built = built || !st.Cursor.IsZero()
	}
	if !built {
		return nil, "Read from the desk: the mirror is not built yet."
	}
	now := e.now()
	for _, ws := range slices.Sorted(maps.Keys(states)) {
		tickets, st, err := e.cfg.mirror.MirrorLoad(ctx, ws)
		if err != nil {
			return nil, fmt.Sprintf("Read from the desk: deskbot's mirror could not be read (%v).", err)
		}
		i, found := slices.BinarySearchFunc(tickets, id, func(t *sdclient.Ticket, id int64) int { return cmp.Compare(t.ID, id) })
		switch {
		case !found:
			continue
		case st.Cursor.IsZero():
			return nil, "Read from the desk: the mirror is not built yet."
		case now.Sub(st.Cursor) > mirrorMaxLag:
			return nil, fmt.Sprintf("Read from the desk: deskbot's mirror is too old to trust (%s, more than %s ago).",
				store.MirrorAsOf(st.Cursor, now), minutes(mirrorMaxLag))
		}
		return tickets[i], fmt.Sprintf("From deskbot's mirror, %s (change feed cursor); the desk was not asked.", store.MirrorAsOf(st.Cursor, now))
	}
	return nil, fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.", id)
}

// minutes is a whole number of minutes in words.
func minutes(d time.Duration) string { return fmt.Sprintf("%d minutes", int(d/time.Minute)) }

const noRules = "No rules are loaded (set DESKBOT_RULES or add rules.yaml)."

// ExplainTicket explains a ticket the caller has just read (bot.Explainer:
// /ticket why reads the ticket anyway, from the mirror or the desk, to
// check the caller may see it, and says itself where it read it from).
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
	if err := e.writeNextRuns(ctx, &b, set, now); err != nil {
		return "", err
	}
	writeDigestsOf(&b, set, t, now)
	if e.ledger == nil {
		return b.String(), nil
	}
	b.WriteString("\nLedger:\n")
	for _, r := range set.Rules() {
		info, ok, err := e.ledger.FiringState(ctx, rules.FiringKey{Rule: r.Name, TicketID: t.ID})
		if err != nil {
			return "", fmt.Errorf("read the ledger for rule %q: %w", r.Name, err)
		}
		line := plan.LedgerLine(r, info, ok)
		if e.cfg.held != nil {
			if h, held := e.cfg.held.HeldBack(rules.FiringKey{Rule: r.Name, TicketID: t.ID}); held {
				line += "; " + h.String()
			}
		}
		b.WriteString("  " + line + "\n")
	}
	return b.String(), nil
}

// writeNextRuns says when each rule runs next.
func (e *Explainer) writeNextRuns(ctx context.Context, b *strings.Builder, set *rules.Set, now time.Time) error {
	var runs map[string]store.RuleRun
	if e.cfg.runs != nil {
		var err error
		if runs, err = e.cfg.runs.RuleRuns(ctx); err != nil {
			return fmt.Errorf("read when the rules last ran: %w", err)
		}
	}
	plan.WriteNextRuns(b, set, runs, now)
	return nil
}

// writeDigestsOf says, for every digest rule, whether t is among its
// tickets (and in which of its lists) and when it runs next.
func writeDigestsOf(b *strings.Builder, set *rules.Set, t *sdclient.Ticket, now time.Time) {
	ds := set.Digests()
	if len(ds) == 0 {
		return
	}
	b.WriteString("\nDigests:\n")
	for _, d := range ds {
		next := d.Next(now)
		r := d.Report([]*sdclient.Ticket{t}, next, nil)
		var in string
		switch {
		case r.Total == 0 && !sdclient.IsOpenStatus(t.Status):
			in = "not among its tickets: the ticket is not open"
		case r.Total == 0:
			in = "not among its tickets: its query does not hold"
		default:
			in = "counted among its open tickets"
			if r.BreachingTotal > 0 {
				in += fmt.Sprintf(", listed under what is due within %s", rules.ShortDuration(d.Within))
			}
			if r.UnassignedTotal > 0 {
				in += ", listed under the unassigned"
			}
			if r.BreachingTotal+r.UnassignedTotal > 0 {
				in += fmt.Sprintf(" (each list shows its first %d)", d.List)
			}
		}
		fmt.Fprintf(b, "  digest %s (to %s): %s; next run %s\n", d.Name, d.Channel, in, next.UTC().Format("Mon 2006-01-02 15:04 MST"))
	}
}
