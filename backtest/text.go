package backtest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
)

// WriteText writes rep as `deskbot rules backtest` prints it.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Backtest of %s from %s to %s (%s): %s of %s replayed in %s; nothing was sent to the desk or the chat.\n",
		rep.File, plan.Stamp(rep.From), plan.Stamp(rep.To), Days(rep.To.Sub(rep.From)),
		count(rep.Records, "change"), count(rep.Tickets, "ticket"), count(rep.Cycles, "cycle"))
	t := rep.Totals
	fmt.Fprintf(&b, "In all: %s, %s, %s, %s e-mailed to requesters, %s, %s.\n",
		count(t.Firings, "firing"), count(t.Messages, "chat message"), count(t.Pages, "page"), count(t.Replies, "public reply"),
		count(t.Notes, "note"), count(t.Updates, "update"))
	for _, r := range rep.Rules {
		writeRule(&b, r)
	}
	if d := rep.Against; d != nil {
		writeDiff(&b, d, rep.Totals)
	}
	b.WriteString("\nLimits:\n")
	for _, l := range rep.Limits {
		fmt.Fprintf(&b, "  - %s\n", l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRule(b *strings.Builder, r RuleReport) {
	fmt.Fprintf(b, "\nrule %s (%s; %s first)\n", r.Name, r.Schedule, r.Class)
	if r.Approximate {
		fmt.Fprintf(b, "  APPROXIMATE: its if reads %s, which the history does not keep (empty in the replay)\n", strings.Join(r.Unrecorded, ", "))
	}
	if r.Firings == 0 && r.HeldBack == 0 {
		if s := r.Supervisor; s != nil && s.Firings == 0 {
			b.WriteString("  no firings, nor with the desk's hourly supervisor\n")
			return
		}
		b.WriteString("  no firings\n")
		writeSupervisor(b, r)
		return
	}
	fmt.Fprintf(b, "  firings: %d on %s; %s, %s, %s e-mailed to requesters, %s, %s\n", r.Firings, count(r.Tickets, "ticket"),
		count(r.Messages, "chat message"), count(r.Pages, "page"), count(r.Replies, "public reply"), count(r.Notes, "note"), count(r.Updates, "update"))
	if h := HeldText(r); h != "" {
		fmt.Fprintf(b, "  %s\n", h)
	}
	if r.Firings == 0 {
		writeSupervisor(b, r)
		return
	}
	if h := r.BusiestHour; h != nil {
		fmt.Fprintf(b, "  busiest hour: %s (%s)\n", h.Start.UTC().Format("2006-01-02 15:04Z"), count(h.Firings, "firing"))
	}
	fmt.Fprintf(b, "  time from matching to firing: %s\n", WaitText(r))
	writeSupervisor(b, r)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  day\tfirings\tmessages\tpages\treplies\tnotes\tupdates\t")
	for _, d := range r.Days {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", d.Date, d.Firings, d.Messages, d.Pages, d.Replies, d.Notes, d.Updates)
	}
	_ = tw.Flush() // a strings.Builder does not fail
}

func writeSupervisor(b *strings.Builder, r RuleReport) {
	if r.Supervisor != nil {
		fmt.Fprintf(b, "  the desk's hourly supervisor: %s\n", SupervisorText(r))
	}
}

// HeldText says how the caps held r's firings back, "" when they did
// not: the text report's line and the HTML report's note.
func HeldText(r RuleReport) string {
	if r.HeldBack == 0 {
		return ""
	}
	line := fmt.Sprintf("held back by caps %s (a ticket held in two cycles counts twice)", count(r.HeldBack, "time"))
	switch {
	case r.Waiting == 0 && r.Dropped == 0:
		return line + "; each fired in a later cycle"
	case r.Waiting > 0:
		line += fmt.Sprintf("; %s still waiting when the replay ended", count(r.Waiting, "ticket"))
	}
	if r.Dropped > 0 {
		line += fmt.Sprintf("; %s stopped matching while held", count(r.Dropped, "ticket"))
	}
	return line
}

// WaitText is r's time from a ticket beginning to match to its firing:
// "median 1m30s, p90 4m30s", or "at once" when every firing came as its
// ticket began to match; "" without firings.
func WaitText(r RuleReport) string {
	l := r.TimeToFire
	switch {
	case l.N == 0:
		return ""
	case l.P90() < time.Second:
		return "at once (each fired as its ticket began to match)"
	}
	return fmt.Sprintf("median %s, p90 %s", short(l.Median()), short(l.P90()))
}

// SupervisorText compares r's firings with the desk's hourly supervisor's:
// how many it made, and of deskbot's how many it made too (later, or at
// the same time, or earlier), never, or could not be compared. r.Supervisor must be
// set.
func SupervisorText(r RuleReport) string {
	s := r.Supervisor
	line := count(s.Firings, "firing")
	later := s.Compared - s.SameTime
	switch {
	case s.Compared == 0:
	case later == 0:
		line += fmt.Sprintf("; it made %d of deskbot's firings at the same time", s.Compared)
	case s.SameTime == 0:
		line += fmt.Sprintf("; it made %d of deskbot's firings later: median %s, p90 %s later", later, short(s.Later.Median()), short(s.Later.P90()))
	default:
		line += fmt.Sprintf("; it made %d of deskbot's firings too, %d later and %d at the same time: median %s, p90 %s later",
			s.Compared, later, s.SameTime, short(s.Later.Median()), short(s.Later.P90()))
	}
	if s.Earlier.N > 0 {
		line += fmt.Sprintf("; %d of deskbot's it made earlier (deskbot's schedule waited longer than its hour): median %s, p90 %s earlier",
			s.Earlier.N, short(s.Earlier.Median()), short(s.Earlier.P90()))
	}
	if s.Missed > 0 {
		line += fmt.Sprintf("; %d never (the ticket stopped matching before its hourly run)", s.Missed)
	}
	if s.Unreached > 0 {
		line += fmt.Sprintf("; %d of deskbot's came after its last hourly run in the replay, so cannot be compared", s.Unreached)
	}
	return line
}

func writeDiff(b *strings.Builder, d *Diff, cur Totals) {
	fmt.Fprintf(b, "\nAgainst %s: %s with it, %d with this file", d.OldFile, count(d.OldTotals.Firings, "firing"), cur.Firings)
	fmt.Fprintf(b, " (public replies %d -> %d, pages %d -> %d, chat messages %d -> %d).\n",
		d.OldTotals.Replies, cur.Replies, d.OldTotals.Pages, cur.Pages, d.OldTotals.Messages, cur.Messages)
	if len(d.AddedRules) > 0 {
		fmt.Fprintf(b, "  rules added: %s\n", strings.Join(d.AddedRules, ", "))
	}
	if len(d.RemovedRules) > 0 {
		fmt.Fprintf(b, "  rules removed: %s\n", strings.Join(d.RemovedRules, ", "))
	}
	if len(d.Rules) == 0 {
		b.WriteString("  every rule fires on the same tickets at the same times\n")
	}
	for _, r := range d.Rules {
		fmt.Fprintf(b, "  %s (%s): %d -> %d firings", r.Name, r.Change, r.OldFirings, r.NewFirings)
		if len(r.AddedTickets) > 0 {
			fmt.Fprintf(b, "; adds %s", ids(r.AddedTickets))
		}
		if len(r.RemovedTickets) > 0 {
			fmt.Fprintf(b, "; removes %s", ids(r.RemovedTickets))
		}
		if len(r.Moved) > 0 {
			var sum time.Duration
			for _, m := range r.Moved {
				sum += m.New.Sub(m.Old)
			}
			fmt.Fprintf(b, "; %s first at another time (on average %s)", count(len(r.Moved), "ticket"), signed(sum/time.Duration(len(r.Moved))))
		}
		b.WriteString("\n")
	}
}

// ids lists ticket ids, the first ten by number.
func ids(xs []int64) string {
	var parts []string
	for i, id := range xs {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(xs)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("#%d", id))
	}
	return count(len(xs), "ticket") + " (" + strings.Join(parts, ", ") + ")"
}

func signed(d time.Duration) string {
	if d < 0 {
		return short(-d) + " earlier"
	}
	return short(d) + " later"
}

// short is d rounded to the second, as a rules file writes it.
func short(d time.Duration) string {
	if d >= time.Hour {
		d = d.Round(time.Minute)
	}
	return rules.ShortDuration(d.Round(time.Second))
}

// Days prints d in days when it is whole days (7d), else as a rules file would.
func Days(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return short(d)
}

// count is "1 firing", "2 firings", "1 public reply", "2 public replies".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
