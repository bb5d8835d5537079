package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/planreport"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/store"
)

const rulesUsage = `Usage:
  deskbot rules check FILE [--custom-field NAME:KIND ...] [--status ID:NAME ...]
  deskbot rules test FILE --tickets TICKETS.json [--now RFC3339] [--custom-field NAME:KIND ...] [--status ID:NAME ...]
  deskbot rules why FILE --ticket N
  deskbot rules plan [FILE]
  deskbot rules backtest FILE [--since 7d] [--against OLD_FILE] [--format text|json|html] [--keep=false]

check and test work offline: name the desk's custom ticket fields that
queries filter on with --custom-field (KIND: text, number, checkbox or
date), and its custom statuses with --status (the built-in ones are 2
Open, 3 Pending, 4 Resolved, 5 Closed); why, plan and deskbot itself
read them from the desk. plan says
what the rules would do on the desk now (first run, caps, grouping,
requests an hour); FILE defaults to DESKBOT_RULES, else rules.yaml.
backtest replays FILE over the history of the desk's changes that
deskbot recorded in DESKBOT_STATE (DESKBOT_HISTORY) and says what it
would have done, per rule and day; it sends nothing, and writes only
its report, kept in DESKBOT_STATE for the status page /backtest
(--keep=false: not kept).
`

// cmdRules dispatches `deskbot rules check|test|why|plan`.
func cmdRules(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, rulesUsage)
		return errors.New("rules: missing subcommand (check, test, why, plan or backtest)")
	}
	switch args[0] {
	case "check":
		return cmdRulesCheck(e, args[1:])
	case "test":
		return cmdRulesTest(e, args[1:])
	case "why":
		return cmdRulesWhy(ctx, e, args[1:])
	case "plan":
		return cmdRulesPlan(ctx, e, args[1:])
	case "backtest":
		return cmdRulesBacktest(ctx, e, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, rulesUsage)
		return nil
	default:
		fmt.Fprint(e.stderr, rulesUsage)
		return fmt.Errorf("rules: unknown subcommand %q", args[0])
	}
}

// parseWithFile parses flags that may come before or after the one
// positional FILE argument, as users type them both ways.
func parseWithFile(fs *flag.FlagSet, args []string) (string, error) {
	if err := parseFlags(fs, args); err != nil {
		return "", err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return "", errors.New("missing FILE")
	}
	file := rest[0]
	if err := parseFlags(fs, rest[1:]); err != nil {
		return "", err
	}
	if len(fs.Args()) > 0 {
		return "", fmt.Errorf("unexpected argument %q", fs.Args()[0])
	}
	return file, nil
}

// loadRulesForCLI loads a rules file; a file with errors prints each
// positioned error on its own line to stderr and exits 1.
func loadRulesForCLI(e env, file string, opts ...rules.Option) (*rules.Set, error) {
	set, err := rules.LoadFile(file, opts...)
	if err == nil {
		return set, nil
	}
	var le *rules.LoadError
	if errors.As(err, &le) {
		fmt.Fprintln(e.stderr, le.Error())
		return nil, exitError{code: 1}
	}
	return nil, err
}

// plural is "1 rule", "2 rules", "1 policy", "3 policies", as the plan
// report counts.
var plural = planreport.Plural

// customFieldFlag adds --custom-field to fs: the custom ticket fields that
// queries may filter on, for the commands that do not ask the desk.
func customFieldFlag(fs *flag.FlagSet) map[string]filter.Kind {
	fields := map[string]filter.Kind{}
	kinds := map[string]filter.Kind{"text": filter.KindString, "number": filter.KindNumber, "checkbox": filter.KindBool, "date": filter.KindDate}
	fs.Func("custom-field", "a custom ticket field queries filter on, as NAME:KIND with KIND text, number, checkbox or date (repeatable)", func(v string) error {
		name, kind, ok := strings.Cut(v, ":")
		k, known := kinds[strings.ToLower(kind)]
		switch {
		case !ok || name == "":
			return fmt.Errorf("%q: want NAME:KIND, e.g. location:text", v)
		case !known:
			return fmt.Errorf("%q: unknown kind %q; want text, number, checkbox or date", v, kind)
		}
		fields[name] = k
		return nil
	})
	return fields
}

// statusFlag adds --status to fs: the desk's custom statuses, which
// queries may ask for besides the built-in ones, for the commands that do
// not ask the desk. The options it returns read them once fs is parsed.
func statusFlag(fs *flag.FlagSet) func() []rules.Option {
	statuses := rules.BuiltinChoices("status")
	builtin := len(statuses)
	fs.Func("status", "a custom ticket status of the desk that queries ask for, as ID:NAME, e.g. 6:Awaiting vendor (repeatable)", func(v string) error {
		id, name, ok := strings.Cut(v, ":")
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
		if !ok || err != nil || n <= 0 || strings.TrimSpace(name) == "" {
			return fmt.Errorf("%q: want ID:NAME, e.g. 6:Awaiting vendor", v)
		}
		statuses = append(statuses, sdclient.FieldChoice{ID: n, Value: strings.TrimSpace(name)})
		return nil
	})
	return func() []rules.Option {
		if len(statuses) == builtin {
			return nil
		}
		return []rules.Option{rules.WithFieldChoices("status", statuses)}
	}
}

func cmdRulesCheck(e env, args []string) error {
	fs := newFlags(e, "rules check", "rules check FILE [--custom-field NAME:KIND ...] [--status ID:NAME ...]")
	custom := customFieldFlag(fs)
	statuses := statusFlag(fs)
	file, err := parseWithFile(fs, args)
	if err != nil {
		return usageErr(fs, "rules check", err)
	}
	set, err := loadRulesForCLI(e, file, append(statuses(), rules.WithCustomFields(custom))...)
	if err != nil {
		return err
	}
	summary := plural(len(set.Rules()), "rule")
	if n := len(set.Digests()); n > 0 {
		summary += ", " + plural(n, "digest")
	}
	if oc := set.OnCall(); oc != nil {
		summary += fmt.Sprintf(", on-call: %s and %s", plural(len(oc.Schedules), "schedule"), plural(len(oc.Policies), "policy"))
	}
	fmt.Fprintf(e.stdout, "%s: ok, %s\n", file, summary)
	return nil
}

func cmdRulesTest(e env, args []string) error {
	fs := newFlags(e, "rules test", "rules test FILE --tickets TICKETS.json [--now RFC3339] [--custom-field NAME:KIND ...] [--status ID:NAME ...]")
	custom := customFieldFlag(fs)
	statuses := statusFlag(fs)
	ticketsPath := fs.String("tickets", "", "JSON file of tickets: an array, or the API's {\"tickets\": [...]}")
	nowFlag := fs.String("now", "", "the evaluation clock, RFC3339 (default: the current time)")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return usageErr(fs, "rules test", err)
	}
	if *ticketsPath == "" {
		return usageErr(fs, "rules test", errors.New("--tickets is required"))
	}
	now := time.Now().UTC()
	if *nowFlag != "" {
		if now, err = time.Parse(time.RFC3339, *nowFlag); err != nil {
			return usageErr(fs, "rules test", fmt.Errorf("--now %q is not RFC3339 (e.g. 2025-03-10T10:00:00Z)", *nowFlag))
		}
	}
	set, err := loadRulesForCLI(e, file, append(statuses(), rules.WithCustomFields(custom))...)
	if err != nil {
		return err
	}
	f, err := os.Open(*ticketsPath)
	if err != nil {
		return fmt.Errorf("rules test: %w", err)
	}
	defer f.Close()
	tickets, err := rules.ReadTickets(f)
	if err != nil {
		return fmt.Errorf("rules test: %s: %w", *ticketsPath, err)
	}
	plan := rules.Plan(set, tickets, now)
	if err := rules.WritePlan(e.stdout, plan); err != nil {
		return err
	}
	writeDigestPreviews(e.stdout, rules.PreviewDigests(set, tickets, now, nil))
	// A rule that fails on a ticket fails the test: in CI, a broken if or
	// template must not pass unnoticed among the planned actions.
	failed := 0
	for _, d := range plan {
		if d.Err != nil {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "rules test: %d rule evaluations failed (marked ERROR above)\n", failed)
		return exitError{code: 1}
	}
	return nil
}

// usageErr prints the flag set's usage and returns a one-line error.
func usageErr(fs *flag.FlagSet, cmd string, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err // the flag package printed the usage already
	}
	var pe parseError
	if !errors.As(err, &pe) { // else the flag package printed it with the error
		fs.Usage()
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// parseError is an error of the flag package, which has printed the
// usage already.
type parseError struct{ err error }

func (e parseError) Error() string { return e.err.Error() }
func (e parseError) Unwrap() error { return e.err }

// parseFlags is fs.Parse, its errors marked as parseError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if w, ok := fs.Output().(*usageWriter); ok {
		w.help = asksHelp(args)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return parseError{err}
	}
	return nil
}

// parseTicketID reads a positive ticket id.
func parseTicketID(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("ticket id %q is not a positive number", s)
	}
	return n, nil
}

// cmdRulesWhy explains every rule of FILE against one live ticket of the
// configured desk (the embedded simulator when none is configured), with
// what the ledger in DESKBOT_STATE says of each rule's episode.
func cmdRulesWhy(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "rules why", "rules why FILE --ticket N")
	ticket := fs.String("ticket", "", "the ticket id")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return usageErr(fs, "rules why", err)
	}
	id, err := parseTicketID(*ticket)
	if err != nil {
		return usageErr(fs, "rules why", fmt.Errorf("--ticket: %w", err))
	}
	cfg, err := loadConfig(ctx, e.getenv)
	if err != nil {
		return err
	}
	logger := newLogger(e.stderr, cfg.LogLevel, cfg.LogFormat)
	client, set, stopDesk, err := cliDeskAndRules(ctx, e, cfg, logger, file)
	if err != nil {
		return err
	}
	defer stopDesk()
	// Which desk first, whatever comes next: a ticket the embedded
	// simulator does not have is no mystery once this is said.
	fmt.Fprint(e.stdout, whichDesk(cfg, client.BaseURL()))
	// The ledger and the ticket mirror are in the state store; the ticket
	// is read from the mirror when it holds it (and the desk is asked
	// only when it does not).
	var ledger firing.FiringStates
	var opts []firing.ExplainerOption
	if path := store.StateFile(cfg.State); path != "" && !fileExists(path) {
		logger.Info("no ledger and no mirror yet: the state file does not exist", "file", path)
		opts = append(opts, firing.ExplainFromMirror(noMirror{}))
	} else if st, err := store.Open(ctx, cfg.State); err != nil {
		logger.Warn("no ledger to report on", "err", err)
	} else {
		defer st.Close()
		ledger = st
		opts = append(opts, firing.ExplainFromMirror(st), firing.ExplainRuns(st))
	}
	ex := firing.NewExplainer(firing.ClientDesk(client.Interactive()), func() *rules.Set { return set }, ledger, nil, opts...)
	text, err := ex.Explain(ctx, id)
	if err != nil {
		if cfg.DeskURL == "" && errors.Is(err, sdclient.ErrNotFound) {
			return fmt.Errorf("rules why: %w (the embedded simulator's desk, see the NOTE above: for another desk, such as one of deskbot sim, set DESKBOT_DESK_URL and DESKBOT_DESK_API_KEY)", err)
		}
		return fmt.Errorf("rules why: %w", err)
	}
	fmt.Fprint(e.stdout, text)
	return nil
}

// whichDesk is the first line of `rules why`: the desk it asked and the
// state it read, loudly when that is the throwaway embedded simulator,
// whose tickets have nothing to do with any ledger on disk.
func whichDesk(cfg *config, base string) string {
	if cfg.DeskURL == "" {
		state := "its state is in memory, so the ledger is empty"
		if !cfg.stateInMemory {
			state = fmt.Sprintf("the ledger read from %s is about other tickets than this desk's", store.Redacted(cfg.State))
		}
		return fmt.Sprintf("NOTE: no DESKBOT_DESK_URL: this is deskbot's embedded simulator, a desk generated afresh for this command, not yours; %s.\n\n", state)
	}
	return fmt.Sprintf("Desk %s; ledger and mirror from DESKBOT_STATE.\n", strings.TrimSuffix(base, "/api/v2/"))
}

// noMirror is the mirror of a state store that does not exist yet.
type noMirror struct{}

func (noMirror) MirrorStates(context.Context) (map[int64]store.MirrorState, error) { return nil, nil }

func (noMirror) MirrorLoad(context.Context, int64) ([]*sdclient.Ticket, store.MirrorState, error) {
	return nil, store.MirrorState{}, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// cliDeskAndRules connects `rules why` and `rules plan` to the configured
// desk (or the embedded simulator), checks the key, and loads the rules
// file with the desk's custom ticket fields. stop ends the simulator.
func cliDeskAndRules(ctx context.Context, e env, cfg *config, logger *slog.Logger, file string) (client *sdclient.Client, set *rules.Set, stop func(), err error) {
	d, err := connectDesk(ctx, cfg, logger, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := d.reach.failed(); err != nil {
		d.stop()
		return nil, nil, nil, err
	}
	defer func() {
		if err != nil {
			d.stop()
		}
	}()
	client = d.client
	custom, cerr := client.CustomFields(ctx)
	if cerr != nil {
		logger.Warn("cannot read the desk's custom ticket fields; queries cannot filter on them", "err", cerr)
	}
	choices, cerr := client.CodedChoices(ctx)
	if cerr != nil {
		logger.Warn("cannot read the desk's ticket statuses; queries are checked against the built-in ones", "err", cerr)
	}
	set, err = loadRulesForCLI(e, file, append(fieldChoiceOptions(choices), rules.WithCustomFields(custom))...)
	if err != nil {
		return nil, nil, nil, err
	}
	return client, set, d.stop, nil
}
