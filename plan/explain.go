package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// The reasoning behind /ticket why and deskbot rules why, from values the
// caller read: when each rule runs next, and what the ledger says of a
// rule on a ticket.

// WriteNextRuns says when each rule of set runs next at now, from the
// rules' last runs (nil: as on a first start).
func WriteNextRuns(b *strings.Builder, set *rules.Set, runs map[string]store.RuleRun, now time.Time) {
	b.WriteString("\nNext runs:\n")
	for _, r := range set.Rules() {
		rec, ok := runs[r.Name]
		fmt.Fprintf(b, "  %s: %s\n", r.Name, NextRunText(r, NextRun(r, rec, ok, now), now))
	}
}

// LedgerLine says in one line what the ledger knows of rule r on a
// ticket: its record info, when ok.
func LedgerLine(r *rules.Rule, info rules.FiringRecord, ok bool) string {
	if !ok {
		return fmt.Sprintf("%s: never fired; can fire on the next poll where it holds", r.Name)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s: episode %d ", r.Name, info.Episode)
	if info.Open {
		s.WriteString("open")
	} else {
		fmt.Fprintf(&s, "ended %s", Stamp(info.EpisodeEnded))
	}
	switch info.State {
	case rules.FiringPending:
		fmt.Fprintf(&s, ", firing %d pending since %s (actions done: %v", info.Seq, Stamp(info.ClaimedAt), info.Done)
		if info.Attempts > 1 {
			fmt.Fprintf(&s, ", %d attempts", info.Attempts)
		}
		s.WriteString(")")
		if info.LastError != "" {
			s.WriteString("; " + LastAttempt(info.LastError))
		}
	case rules.FiringDone:
		fmt.Fprintf(&s, ", fired %s", Stamp(info.FiredAt))
	}
	if !info.Open {
		if r.Once.Mode == rules.OnceTicket && !info.LastFiredAt.IsZero() {
			s.WriteString("; once: ticket, so it never fires again")
		} else {
			s.WriteString("; can fire again when it holds")
		}
		return s.String()
	}
	if next, can := r.Once.NextEligible(info); can {
		fmt.Fprintf(&s, "; can fire again from %s", Stamp(next))
	} else if r.Once.Mode == rules.OnceTicket {
		s.WriteString("; once: ticket, so it never fires again")
	} else {
		s.WriteString("; fires again only after a complete poll in which it no longer holds")
	}
	return s.String()
}

// What the ledger's last error of a firing released for a stop or for
// deskbot's own request budget starts with, for LastAttempt to show
// plainly.
const (
	LedgerStopped    = "stopped by a shutdown"
	LedgerBudgetWait = "waited for deskbot's request budget"
)

// LastAttempt says plainly why a pending firing's last attempt stopped,
// from the ledger's last error: a stop or deskbot's own request budget
// (a firing released for them: the raw error is in the log) is not a refusal.
func LastAttempt(lastError string) string {
	switch {
	case strings.HasPrefix(lastError, LedgerStopped) || strings.Contains(lastError, sdclient.ErrStopped.Error()):
		return "stopped by a shutdown; resumes next cycle"
	case strings.HasPrefix(lastError, LedgerBudgetWait):
		return "waited for deskbot's request budget; goes on next cycle"
	}
	return "last attempt refused: " + lastError
}

// NoRules is the whole explanation when no rules are loaded.
const NoRules = "No rules are loaded (set DESKBOT_RULES or add rules.yaml)."

// Why is what an explanation of one ticket says, from values the caller
// read: the ticket, the rules, the rules' last runs (nil: as on a first
// start), and, with Ledger set, the ledger's record of each rule on the
// ticket (absent: never fired) and what the caps held back (by rule).
type Why struct {
	Ticket *sdclient.Ticket
	Set    *rules.Set
	Now    time.Time
	Runs   map[string]store.RuleRun
	Ledger bool // the ledger is known: say what it holds
	States map[string]rules.FiringRecord
	Held   map[string]Held
}

// Text is the explanation: every rule, whether its query and `if` hold
// with the values that decided, when each rule runs next, the digests
// that count the ticket, and what the ledger says of each rule.
func (w Why) Text() (string, error) {
	if w.Set == nil {
		return NoRules, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Ticket #%d %q at %s, rules of %s:\n\n", w.Ticket.ID, w.Ticket.Subject, w.Now.UTC().Format(time.RFC3339), w.Set.File())
	if err := rules.WriteExplanation(&b, w.Set.Explain(w.Ticket, w.Now)); err != nil {
		return "", err
	}
	WriteNextRuns(&b, w.Set, w.Runs, w.Now)
	writeDigestsOf(&b, w.Set, w.Ticket, w.Now)
	if !w.Ledger {
		return b.String(), nil
	}
	b.WriteString("\nLedger:\n")
	for _, r := range w.Set.Rules() {
		info, ok := w.States[r.Name]
		line := LedgerLine(r, info, ok)
		if h, held := w.Held[r.Name]; held {
			line += "; " + h.String()
		}
		b.WriteString("  " + line + "\n")
	}
	return b.String(), nil
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

// MirrorMaxLag is how far the mirror's cursor may be behind the clock for
// an explanation to trust it: the leader moves it every cycle, so a cursor
// further behind means nobody keeps the mirror (no deskbot runs, its
// scheduler stopped, the desk has been failing).
const MirrorMaxLag = 15 * time.Minute

// MirrorSource says where an explanation read a ticket the mirror holds,
// whose workspace's mirror state is st: from the mirror (trust) or, when
// it is not built or too old, from the desk, saying why.
func MirrorSource(st store.MirrorState, now time.Time) (source string, trust bool) {
	switch {
	case st.Cursor.IsZero():
		return MirrorNotBuilt, false
	case now.Sub(st.Cursor) > MirrorMaxLag:
		return fmt.Sprintf("Read from the desk: deskbot's mirror is too old to trust (%s, more than %d minutes ago).",
			store.MirrorAsOf(st.Cursor, now), int(MirrorMaxLag/time.Minute)), false
	}
	return fmt.Sprintf("From deskbot's mirror, %s (change feed cursor); the desk was not asked.", store.MirrorAsOf(st.Cursor, now)), true
}

// MirrorNotBuilt is where an explanation reads a ticket before the
// mirror's first full sync.
const MirrorNotBuilt = "Read from the desk: the mirror is not built yet."
