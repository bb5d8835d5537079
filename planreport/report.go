package planreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
)

// Report is what `deskbot rules plan` prints and the status pages' /plan
// shows.
type Report struct {
	Source     string // what the rules come from: the rules file, or "the live mirror"
	Set        *rules.Set
	Outlook    plan.Outlook
	Cycle      scheduler.Cycle // the plan's cycle: its Sync says how many tickets and what a full sync cost
	LedgerNote string          // what the ledger says, or why it says nothing
	Workspaces int
	Budget     int // background requests per minute
	Rate       int // DESKBOT_DESK_RATE_PER_MIN
}

// firingWrites is what one firing of r writes on the desk (notes, replies,
// updates): plan.FiringRequests less the re-read before acting.
func firingWrites(r *rules.Rule) int { return plan.FiringRequests(r) - 1 }

// Write prints the report to w: per rule what matches at its first run and
// what that run posts and writes, how its cap spreads the backlog and how
// long it takes to drain (across rules, under the budget), the desk
// requests a firing costs; then the requests per hour and what they
// assume.
func (p Report) Write(w io.Writer) error {
	var b strings.Builder
	o := p.Outlook
	mirrored, full := 0, 0
	if s := p.Cycle.Sync; s != nil {
		mirrored, full = s.Tickets, s.FullSyncRequests
	}
	// A plan from a running scheduler's memory read nothing for it.
	read := ""
	if full > 0 {
		read = fmt.Sprintf(" (%s read them)", Plural(full, "request"))
	}
	fmt.Fprintf(&b, "Plan for %s: %s on %s mirrored%s, at %s.\n",
		p.Source, Plural(len(o.Rules), "rule"), Plural(mirrored, "ticket"), read, o.At.UTC().Format(time.RFC3339))
	caps := "no cap across rules"
	if o.CycleCap > 0 {
		caps = fmt.Sprintf("at most %d firings per cycle across rules (DESKBOT_MAX_FIRINGS_PER_CYCLE)", o.CycleCap)
	}
	fmt.Fprintf(&b, "Cycles tick every %s; %s; %s.\n", rules.ShortDuration(o.Tick), caps, p.LedgerNote)

	// How the firings that run now drain: the caps, the budget and the
	// stretch together (plan.Outlook.PlanDrain; rules whose first run is
	// later drain then).
	drain := o.PlanDrain(p.Budget, p.Workspaces, p.fullSync())
	firstRun := 0 // requests of the firings that run now
	waves := 0
	for _, ro := range o.Rules {
		n, cost := p.writeRule(&b, ro, drain)
		waves = max(waves, n)
		firstRun += cost
	}
	p.writeRequests(&b, full, firstRun, waves, drain)
	b.WriteString("\nAssumes the tickets keep matching and no new ones arrive; a firing's own updates (which may make other rules match) are not simulated.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRule writes what rule ro matches and how its firings drain; for a
// rule that runs now it returns its cycles to drain and its first run's
// requests (0, 0 otherwise).
func (p Report) writeRule(b *strings.Builder, ro plan.RuleOutlook, drain plan.Drain) (waves, requests int) {
	o := p.Outlook
	r := ro.Rule
	later := ro.Next.After(o.At)
	sched := "every " + rules.ShortDuration(r.Every)
	if r.Cron != "" {
		sched = "cron " + r.Cron
	}
	if r.Cron != "" || later {
		sched += ", next at " + ro.Next.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(b, "\nrule %s (%s, once: %s, group_over %d, max_firings_per_cycle %d)\n",
		r.Name, sched, onceText(r.Once), ro.GroupOver(), ro.RuleCap())
	when := "now"
	if later {
		when = "at " + ro.Next.UTC().Format(time.RFC3339) + ", in " + rules.ShortDuration(ro.Next.Sub(o.At).Round(time.Minute))
	}
	fmt.Fprintln(b, matchesLine(ro, when))
	if len(ro.Fires) == 0 {
		fmt.Fprintln(b, "  first run: nothing")
		return 0, 0
	}
	fmt.Fprintf(b, "  first run: %s\n", firstCycle(ro, when))
	switch {
	case len(ro.Waves) <= 1:
		fmt.Fprintf(b, "  capped: no, all %d fire in the first cycle\n", len(ro.Fires))
	case later:
		fmt.Fprintf(b, "  capped: %s; the backlog drains over %d cycles from its first run\n", waveText(ro), len(ro.Waves))
	default:
		fmt.Fprintf(b, "  capped: %s; the backlog drains in %s (%d cycles%s)\n", waveText(ro),
			rules.ShortDuration(drain.Rules[r.Name]), len(ro.Waves), stretchedText(drain, o.Tick))
	}
	cost := plan.FiringRequests(r)
	fmt.Fprintf(b, "  desk requests: %d a firing (1 re-read + %s): %d for the first run\n",
		cost, Plural(firingWrites(r), "write"), len(ro.Fires)*cost)
	if later {
		return 0, 0
	}
	return len(ro.Waves), len(ro.Fires) * cost
}

// matchesLine is a rule's "  matches now: 3 tickets (...): #1, #2, #3".
func matchesLine(ro plan.RuleOutlook, when string) string {
	matches := len(ro.Fires) + ro.AlreadyFired + ro.Failed
	line := fmt.Sprintf("  matches %s: %s", when, Plural(matches, "ticket"))
	var extra []string
	if ro.AlreadyFired > 0 {
		extra = append(extra, fmt.Sprintf("%d fired already", ro.AlreadyFired))
	}
	if ro.Failed > 0 {
		extra = append(extra, fmt.Sprintf("%d fail to evaluate (see rules why)", ro.Failed))
	}
	if len(extra) > 0 {
		line += " (" + strings.Join(extra, ", ") + ")"
	}
	if len(ro.Fires) > 0 {
		line += ": " + ticketList(ro.Fires, 10)
	}
	return line
}

// writeRequests writes the desk requests an hour, and the assumptions
// behind them; full is the full sync's requests, firstRun and waves those
// of the firings that run now and the cycles they drain over.
func (p Report) writeRequests(b *strings.Builder, full, firstRun, waves int, drain plan.Drain) {
	o := p.Outlook
	cycles := cyclesPerHour(p.Set)
	feedPerHour := cycles * p.Workspaces
	sweep := 2 * p.Workspaces * int(time.Hour/feed.DefaultTrashEvery)
	fullPerHour := float64(full) / (feed.DefaultFullSyncEvery.Hours())
	fmt.Fprintf(b, "\nRequests (budget: %d a minute, %d of them for the rules, the rest kept for people's commands):\n", p.Rate, p.Budget)
	fmt.Fprintf(b, "  change feed: %d an hour (%d cycles an hour × %s, one page per 100 changed tickets: more on a busy desk)\n",
		feedPerHour, cycles, Plural(p.Workspaces, "workspace"))
	fmt.Fprintf(b, "  deleted and spam sweep: %d an hour (2 lists every %s a workspace)\n", sweep, rules.ShortDuration(feed.DefaultTrashEvery))
	if full > 0 {
		fmt.Fprintf(b, "  full sync: %d requests every %s, about %.1f an hour\n", full, rules.ShortDuration(feed.DefaultFullSyncEvery), fullPerHour)
	} else {
		fmt.Fprintf(b, "  full sync: every %s, not counted here (`deskbot rules plan` measures it)\n", rules.ShortDuration(feed.DefaultFullSyncEvery))
	}
	fmt.Fprintf(b, "  steady state: about %d an hour before firings; each firing adds its re-read and writes (above)\n",
		feedPerHour+sweep+int(fullPerHour+0.5))
	if firstRun > 0 {
		busiest := p.busiestCycle(waves)
		budgetPerCycle := float64(p.Budget) * o.Tick.Minutes()
		fmt.Fprintf(b, "  first run: %d requests for its firings over %s (at most %d in one cycle, against a budget of %.0f a cycle)",
			firstRun, Plural(max(waves, 1), "cycle"), busiest, budgetPerCycle)
		if drain.Every > o.Tick || (budgetPerCycle > 0 && float64(busiest) > budgetPerCycle) {
			fmt.Fprintf(b, ": over it, firings wait for the budget and cycles stretch to about every %s until it drains",
				rules.ShortDuration(max(drain.Every, o.Tick).Round(time.Second)))
		}
		b.WriteString("\n")
	}
	if waves > 1 {
		fmt.Fprintf(b, "  backlog: every rule has fired on what matches now after %s (%d cycles%s)\n",
			rules.ShortDuration(drain.Last), waves, stretchedText(drain, o.Tick))
	}
}

// busiestCycle is the most requests one of the first waves cycles sends:
// its firings' re-reads and writes, and the feed.
func (p Report) busiestCycle(waves int) int {
	o := p.Outlook
	busiest := 0
	for i := range waves {
		n := p.Workspaces
		for _, ro := range o.Rules {
			if i < len(ro.Waves) && !ro.Next.After(o.At) {
				n += ro.Waves[i] * (1 + firingWrites(ro.Rule))
			}
		}
		busiest = max(busiest, n)
	}
	return busiest
}

// stretchedText says how far apart the drain's cycles are: ", a tick
// apart" or ", about 2m apart: the budget stretches them".
func stretchedText(d plan.Drain, tick time.Duration) string {
	if d.Every <= tick {
		return ", a tick apart"
	}
	return fmt.Sprintf(", about %s apart: the budget stretches them", rules.ShortDuration(d.Every.Round(time.Second)))
}

// firstCycle says what a rule's first cycle posts and writes, and when:
// "fires on 12 now: 1 grouped message in #it-desk naming 12 tickets, 12
// notes".
func firstCycle(ro plan.RuleOutlook, when string) string {
	now := ro.Now()
	n := len(now)
	if n == 0 {
		// The cap across rules went to the rules before it in the queue.
		later := 0
		for later < len(ro.Waves) && ro.Waves[later] == 0 {
			later++
		}
		return fmt.Sprintf("fires on none %s: the cap across rules goes to the rules before it; its first firings start %s later",
			when, Plural(later, "cycle"))
	}
	var parts []string
	for _, a := range now[0].Actions {
		switch a.Kind {
		case rules.ActionAlert:
			if ro.Grouped() {
				parts = append(parts, fmt.Sprintf("1 grouped message in %s naming %d tickets", a.Channel, n))
			} else {
				parts = append(parts, fmt.Sprintf("%s in %s", Plural(n, "alert"), a.Channel))
			}
		case rules.ActionPage:
			parts = append(parts, fmt.Sprintf("%s (policy %s, cards in %s)", Plural(n, "page"), a.Policy, a.Channel))
		case rules.ActionNote:
			parts = append(parts, Plural(n, "private note"))
		case rules.ActionReply:
			parts = append(parts, Plural(n, "public reply")+" (e-mailed to the requesters)")
		case rules.ActionUpdate:
			parts = append(parts, Plural(n, "update"))
		}
	}
	return fmt.Sprintf("fires on %d %s: %s", n, when, strings.Join(parts, ", "))
}

// waveText is "20 now, 13 in the next cycle" or "20 now, then 20, 20 and 3
// in the next 3 cycles", saying which later cycles post a grouped message.
func waveText(ro plan.RuleOutlook) string {
	ws := ro.Waves
	rest := ws[1:]
	parts := make([]string, len(rest))
	for i, n := range rest {
		parts[i] = fmt.Sprint(n)
		if ro.GroupedIn(i + 1) {
			parts[i] += " (grouped)"
		}
	}
	if len(rest) == 1 {
		return fmt.Sprintf("%d now, %s in the next cycle", ws[0], parts[0])
	}
	return fmt.Sprintf("%d now, then %s and %s in the next %d cycles", ws[0], strings.Join(parts[:len(parts)-1], ", "), parts[len(parts)-1], len(rest))
}

// ticketList names the first n tickets of ds: "#1, #4, #9 and 12 more".
func ticketList(ds []rules.Decision, n int) string {
	ids := make([]string, 0, n)
	for _, d := range ds[:min(n, len(ds))] {
		ids = append(ids, fmt.Sprintf("#%d", d.TicketID))
	}
	s := strings.Join(ids, ", ")
	if len(ds) > n {
		s += fmt.Sprintf(" and %d more", len(ds)-n)
	}
	return s
}

// cyclesPerHour counts the instants of an hour at which some rule is due:
// each every-rule at its multiples, each cron rule at its times.
func cyclesPerHour(set *rules.Set) int {
	start := time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC) // a Monday, on the hour
	end := start.Add(time.Hour)
	at := map[time.Time]bool{}
	for _, r := range set.Rules() {
		if r.Cron != "" {
			sched, err := cron.ParseStandard(r.Cron)
			if err != nil {
				continue
			}
			for t := sched.Next(start.Add(-time.Second)); t.Before(end); t = sched.Next(t) {
				at[t] = true
			}
			continue
		}
		every := r.Every
		if every <= 0 {
			every = rules.DefaultEvery
		}
		for t := start; t.Before(end); t = t.Add(every) {
			at[t] = true
		}
	}
	return len(at)
}

func onceText(o rules.Once) string {
	switch o.Mode {
	case rules.OnceTicket:
		return "ticket"
	case rules.OnceEvery:
		return "every " + rules.ShortDuration(o.Period)
	}
	return "episode"
}

// Plural is "1 rule", "2 rules", "1 policy", "3 policies".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// fullSync is the requests of the full sync the plan's cycle made.
func (p Report) fullSync() int {
	if p.Cycle.Sync == nil {
		return 0
	}
	return p.Cycle.Sync.FullSyncRequests
}
