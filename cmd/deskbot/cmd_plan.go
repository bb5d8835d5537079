package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/store"
)

// cmdRulesPlan says what the rules of FILE would do on the configured desk
// (the embedded simulator when none is configured, said loudly): per rule,
// the tickets that match now, the first run as it would be posted (grouped,
// capped), and the requests it will spend. It runs one dry-run cycle of the
// scheduler over a mirror in memory: nothing changes on the desk, nothing
// is written to the state store.
func cmdRulesPlan(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "rules plan", "rules plan [FILE]")
	if err := parseFlags(fs, args); err != nil {
		return usageErr(fs, "rules plan", err)
	}
	rest := fs.Args()
	if len(rest) > 1 {
		return usageErr(fs, "rules plan", fmt.Errorf("unexpected argument %q", rest[1]))
	}
	cfg, err := loadConfig(ctx, e.getenv)
	if err != nil {
		return err
	}
	file := ""
	if len(rest) == 1 {
		file = rest[0]
	} else if file, err = rulesFile(cfg.Rules); err != nil {
		return err
	} else if file == "" {
		return usageErr(fs, "rules plan", errors.New("missing FILE (DESKBOT_RULES is unset and there is no rules.yaml here)"))
	}
	logger := newLogger(e.stderr, cfg.LogLevel, cfg.LogFormat)
	client, set, stopDesk, err := cliDeskAndRules(ctx, e, cfg, logger, file)
	if err != nil {
		return err
	}
	defer stopDesk()

	// The ledger: with a desk of yours, what the state store says has
	// fired (read only); with the embedded simulator, nothing (the store
	// on disk is about other tickets).
	var fired firing.FiringStates // nil: an empty ledger
	ledgerNote := "no ledger: every matching ticket counts as not fired yet"
	if cfg.DeskURL != "" {
		if path := store.StateFile(cfg.State); path != "" && !fileExists(path) {
			ledgerNote = fmt.Sprintf("no ledger yet (%s does not exist): every matching ticket counts as not fired yet", path)
		} else if st, err := store.Open(ctx, cfg.State); err != nil {
			logger.Warn("no ledger to read", "err", err)
			ledgerNote = "the ledger could not be read: every matching ticket counts as not fired yet"
		} else {
			defer st.Close()
			fired = st
			ledgerNote = "tickets the ledger in DESKBOT_STATE shows as fired are left out"
		}
	}

	var outlook *plan.Outlook
	quiet := newLogger(e.stderr, max(cfg.LogLevel, slog.LevelWarn), cfg.LogFormat)
	opts := []scheduler.Option{
		scheduler.WithDryRun(true),
		scheduler.WithOutlook(func(o plan.Outlook) { outlook = &o }),
		scheduler.WithWorkspaces(cfg.WorkspaceIDs...),
		scheduler.WithMaxFiringsPerCycle(cfg.MaxFiringsPerCycle),
		scheduler.WithEscalator(noEscalator{}, 0), // dry runs page nobody
	}
	sched, err := scheduler.New(quiet, firing.ClientDesk(client), set, firing.ReadOnlyLedger(fired), firing.LogNotifier{}, opts...)
	if err != nil {
		return fmt.Errorf("rules plan: %w", err)
	}
	cy, err := sched.RunCycle(ctx)
	if err != nil {
		return fmt.Errorf("rules plan: %w", err)
	}
	if cy.Sync != nil && cy.Sync.Err != nil {
		return fmt.Errorf("rules plan: read the desk's open tickets: %w", cy.Sync.Err)
	}
	if outlook == nil {
		return errors.New("rules plan: the cycle evaluated no rule")
	}
	p := planReport{
		file: file, set: set, o: *outlook, cycle: cy, ledgerNote: ledgerNote,
		workspaces: max(1, len(cfg.WorkspaceIDs)), budget: client.BackgroundBudget(), rate: cfg.RatePerMin,
	}
	head := whichDesk(cfg, client.BaseURL())
	if cfg.DeskURL != "" {
		head = fmt.Sprintf("Desk %s (DESKBOT_DESK_URL); nothing on it is changed.\n\n", strings.TrimSuffix(client.BaseURL(), "/api/v2/"))
	}
	fmt.Fprint(e.stdout, head)
	if err := p.write(e.stdout); err != nil {
		return err
	}
	writeDigestPreviews(e.stdout, sched.DigestPreviews(outlook.At))
	return nil
}

// planReport is what `rules plan` prints.
type planReport struct {
	file       string
	set        *rules.Set
	o          plan.Outlook
	cycle      scheduler.Cycle
	ledgerNote string
	workspaces int
	budget     int // background requests per minute
	rate       int // DESKBOT_DESK_RATE_PER_MIN
}

// firingWrites is what one firing of r writes on the desk (notes, replies,
// updates): plan.FiringRequests less the re-read before acting.
func firingWrites(r *rules.Rule) int { return plan.FiringRequests(r) - 1 }

func (p planReport) write(w io.Writer) error {
	var b strings.Builder
	o := p.o
	mirrored, full := 0, 0
	if s := p.cycle.Sync; s != nil {
		mirrored, full = s.Tickets, s.FullSyncRequests
	}
	fmt.Fprintf(&b, "Plan for %s: %s on %s mirrored (%s read them), at %s.\n",
		p.file, plural(len(o.Rules), "rule"), plural(mirrored, "ticket"), plural(full, "request"), o.At.UTC().Format(time.RFC3339))
	caps := "no cap across rules"
	if o.CycleCap > 0 {
		caps = fmt.Sprintf("at most %d firings per cycle across rules (DESKBOT_MAX_FIRINGS_PER_CYCLE)", o.CycleCap)
	}
	fmt.Fprintf(&b, "Cycles tick every %s; %s; %s.\n", rules.ShortDuration(o.Tick), caps, p.ledgerNote)

	// How the firings that run now drain: the caps, the budget and the
	// stretch together (scheduler.PlanDrain; rules whose first run is
	// later drain then).
	drain := scheduler.PlanDrain(o, p.cycle, p.budget, p.workspaces)
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
func (p planReport) writeRule(b *strings.Builder, ro plan.RuleOutlook, drain plan.Drain) (waves, requests int) {
	o := p.o
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
		cost, plural(firingWrites(r), "write"), len(ro.Fires)*cost)
	if later {
		return 0, 0
	}
	return len(ro.Waves), len(ro.Fires) * cost
}

// matchesLine is a rule's "  matches now: 3 tickets (...): #1, #2, #3".
func matchesLine(ro plan.RuleOutlook, when string) string {
	matches := len(ro.Fires) + ro.AlreadyFired + ro.Failed
	line := fmt.Sprintf("  matches %s: %s", when, plural(matches, "ticket"))
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
func (p planReport) writeRequests(b *strings.Builder, full, firstRun, waves int, drain plan.Drain) {
	o := p.o
	cycles := cyclesPerHour(p.set)
	feed := cycles * p.workspaces
	sweep := 2 * p.workspaces * int(time.Hour/scheduler.DefaultTrashEvery)
	fullPerHour := float64(full) / (scheduler.DefaultFullSyncEvery.Hours())
	fmt.Fprintf(b, "\nRequests (budget: %d a minute, %d of them for the rules, the rest kept for people's commands):\n", p.rate, p.budget)
	fmt.Fprintf(b, "  change feed: %d an hour (%d cycles an hour × %s, one page per 100 changed tickets: more on a busy desk)\n",
		feed, cycles, plural(p.workspaces, "workspace"))
	fmt.Fprintf(b, "  deleted and spam sweep: %d an hour (2 lists every %s a workspace)\n", sweep, rules.ShortDuration(scheduler.DefaultTrashEvery))
	fmt.Fprintf(b, "  full sync: %d requests every %s, about %.1f an hour\n", full, rules.ShortDuration(scheduler.DefaultFullSyncEvery), fullPerHour)
	fmt.Fprintf(b, "  steady state: about %d an hour before firings; each firing adds its re-read and writes (above)\n",
		feed+sweep+int(fullPerHour+0.5))
	if firstRun > 0 {
		busiest := p.busiestCycle(waves)
		budgetPerCycle := float64(p.budget) * o.Tick.Minutes()
		fmt.Fprintf(b, "  first run: %d requests for its firings over %s (at most %d in one cycle, against a budget of %.0f a cycle)",
			firstRun, plural(max(waves, 1), "cycle"), busiest, budgetPerCycle)
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

// busiestCycle is the most requests one of the first waves cycles spends:
// its firings' requests and the feed.
func (p planReport) busiestCycle(waves int) int {
	busiest := 0
	for i := range waves {
		n := p.workspaces
		for _, ro := range p.o.Rules {
			if i < len(ro.Waves) && !ro.Next.After(p.o.At) {
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
	var parts []string
	for _, a := range now[0].Actions {
		switch a.Kind {
		case rules.ActionAlert:
			if ro.Grouped() {
				parts = append(parts, fmt.Sprintf("1 grouped message in %s naming %d tickets", a.Channel, n))
			} else {
				parts = append(parts, fmt.Sprintf("%s in %s", plural(n, "alert"), a.Channel))
			}
		case rules.ActionPage:
			parts = append(parts, fmt.Sprintf("%s (policy %s, cards in %s)", plural(n, "page"), a.Policy, a.Channel))
		case rules.ActionNote:
			parts = append(parts, plural(n, "private note"))
		case rules.ActionReply:
			parts = append(parts, plural(n, "public reply")+" (e-mailed to the requesters)")
		case rules.ActionUpdate:
			parts = append(parts, plural(n, "update"))
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

// noEscalator lets a plan load rules that page: a dry run starts no page.
type noEscalator struct{}

func (noEscalator) Start(context.Context, oncall.PageSpec, time.Time) (oncall.Page, bool, error) {
	return oncall.Page{}, false, errors.New("rules plan: a dry run pages nobody")
}
func (noEscalator) Tick(context.Context, time.Time) (oncall.TickStats, error) {
	return oncall.TickStats{}, nil
}
func (noEscalator) SetConfig(*oncall.Config) {}
