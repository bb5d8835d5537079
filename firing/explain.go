package firing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// TicketReader reads one ticket (scheduler.ClientDesk satisfies it).
type TicketReader interface {
	// GetTicket reads ticket id.
	GetTicket(ctx context.Context, id int64) (*sdclient.Ticket, *sdclient.Response, error)
}

// Explainer answers `/ticket why N` and `deskbot rules why`: it reads the
// ticket (from the mirror or the desk), the ledger's record of every rule
// on it and the rules' last runs, and plan.Why says what they mean.
type Explainer struct {
	desk   TicketReader
	rules  func() *rules.Set
	ledger FiringStates
	now    func() time.Time
	cfg    explainerConfig
}

// explainerConfig is what ExplainerOptions set.
type explainerConfig struct {
	mirror MirrorReader   // nil: Explain reads the desk
	held   HeldBackReader // nil: caps are not mentioned
	runs   RuleRunReader  // nil: next runs as on a first start
}

// ExplainerOption configures NewExplainer.
type ExplainerOption func(*explainerConfig)

// ExplainRuns makes the explanation say when each rule runs next from the
// rules' last runs in r: plan.NextRun, the answer the scheduler and
// `rules plan` give too. Without it the next runs are those of a first
// start.
func ExplainRuns(r RuleRunReader) ExplainerOption {
	return func(c *explainerConfig) { c.runs = r }
}

// HeldBackReader tells whether the last cycle of a rule held its decision
// on a ticket back by a per-cycle cap (*scheduler.Scheduler implements it).
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

// MirrorReader reads the ticket mirror kept in the state store
// (*store.Store implements it).
type MirrorReader interface {
	// MirrorStates reads every workspace's mirror state.
	MirrorStates(ctx context.Context) (map[int64]store.MirrorState, error)
	// MirrorLoad reads workspace ws's mirror, ordered by ticket id.
	MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error)
}

// ExplainFromMirror makes Explain read the ticket from the mirror, at no
// desk request, and say how fresh it is; it reads the desk, saying why,
// when the mirror is not built yet, does not hold the ticket, or is more
// than plan.MirrorMaxLag behind (nobody keeps it up to date).
func ExplainFromMirror(m MirrorReader) ExplainerOption {
	return func(c *explainerConfig) { c.mirror = m }
}

// NewExplainer returns an Explainer reading tickets from desk (give it the
// interactive client: a person is waiting) and the rules set returns, which
// may change between calls (SIGHUP) or be nil (no rules loaded). A nil
// ledger leaves the ledger out of the answer; a nil now is time.Now.
func NewExplainer(desk TicketReader, set func() *rules.Set, ledger FiringStates, now func() time.Time, opts ...ExplainerOption) *Explainer {
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
		return plan.NoRules, nil
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
		return nil, plan.MirrorNotBuilt
	}
	for _, ws := range slices.Sorted(maps.Keys(states)) {
		tickets, st, err := e.cfg.mirror.MirrorLoad(ctx, ws)
		if err != nil {
			return nil, fmt.Sprintf("Read from the desk: deskbot's mirror could not be read (%v).", err)
		}
		i, found := slices.BinarySearchFunc(tickets, id, func(t *sdclient.Ticket, id int64) int { return cmp.Compare(t.ID, id) })
		if !found {
			continue
		}
		source, trust := plan.MirrorSource(st, e.now())
		if !trust {
			return nil, source
		}
		return tickets[i], source
	}
	return nil, fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.", id)
}

// ExplainTicket explains a ticket the caller has just read (bot.Explainer:
// /ticket why reads the ticket anyway, from the mirror or the desk, to
// check the caller may see it, and says itself where it read it from).
func (e *Explainer) ExplainTicket(ctx context.Context, t *sdclient.Ticket) (string, error) {
	w := plan.Why{Ticket: t, Set: e.rules(), Now: e.now(), Ledger: e.ledger != nil}
	if w.Set == nil {
		return plan.NoRules, nil
	}
	if e.cfg.runs != nil {
		var err error
		if w.Runs, err = e.cfg.runs.RuleRuns(ctx); err != nil {
			return "", fmt.Errorf("read when the rules last ran: %w", err)
		}
	}
	if e.ledger != nil {
		w.States, w.Held = map[string]rules.FiringRecord{}, map[string]plan.Held{}
		for _, r := range w.Set.Rules() {
			key := rules.FiringKey{Rule: r.Name, TicketID: t.ID}
			info, ok, err := e.ledger.FiringState(ctx, key)
			if err != nil {
				return "", fmt.Errorf("read the ledger for rule %q: %w", r.Name, err)
			}
			if ok {
				w.States[r.Name] = info
			}
			if e.cfg.held == nil {
				continue
			}
			if h, held := e.cfg.held.HeldBack(key); held {
				w.Held[r.Name] = h
			}
		}
	}
	return w.Text()
}
