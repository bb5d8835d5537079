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
