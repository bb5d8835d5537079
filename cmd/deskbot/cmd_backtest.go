package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deskbot/deskbot/backtest"
	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/statuspage"
	"github.com/deskbot/deskbot/store"
)

const backtestSynopsis = "rules backtest FILE [--since 7d] [--against OLD_FILE] [--format text|json|html] [--supervisor=false] [--keep=false] [--custom-field NAME:KIND ...] [--status ID:NAME ...]"

// cmdRulesBacktest replays FILE over the history recorded in the state
// store (DESKBOT_STATE) with the scheduler's planning step and reports
// what it would have done; with --against, what it changes compared with
// OLD_FILE. It sends nothing; the one thing it writes, unless
// --keep=false, is its report, kept in the state store for the status
// pages' /backtest (the latest replaces the one before).
func cmdRulesBacktest(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "rules backtest", backtestSynopsis)
	sinceFlag := fs.String("since", "7d", "how far back to replay: 7d, 36h (the history's start at the earliest)")
	against := fs.String("against", "", "an older rules file to compare with over the same history")
	format := fs.String("format", "text", "text, json or html")
	supervisor := fs.Bool("supervisor", true, "also replay each rule as the desk's hourly supervisor would, and say how much later it fires")
	keep := fs.Bool("keep", true, "keep the report in the state store for the status pages' /backtest (the only thing written)")
	custom := customFieldFlag(fs)
	statuses := statusFlag(fs)
	file, err := parseWithFile(fs, args)
	if err != nil {
		return usageErr(fs, "rules backtest", err)
	}
	since, err := parseSince(*sinceFlag)
	if err != nil {
		return usageErr(fs, "rules backtest", fmt.Errorf("--since: %w", err))
	}
	switch *format {
	case "text", "json", "html":
	default:
		return usageErr(fs, "rules backtest", fmt.Errorf("--format: %q: want text, json or html", *format))
	}
	opts := append(statuses(), rules.WithCustomFields(custom))
	set, err := loadRulesForCLI(e, file, opts...)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(ctx, e.getenv)
	if err != nil {
		return err
	}
	st, err := openHistory(ctx, cfg.State)
	if err != nil {
		return fmt.Errorf("rules backtest: %w", err)
	}
	defer func() { _ = st.Close() }()
	var h history.Reader = st

	// Whole seconds, as the desk's times are, rounded up: a change
	// recorded this second is replayed, and a history begun this second
	// is not "nothing to replay".
	now := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	run := []backtest.Option{backtest.WithCycleCap(cfg.MaxFiringsPerCycle), backtest.WithSupervisor(*supervisor)}
	rep, err := backtest.Run(ctx, set, h, now.Add(-since), now, run...)
	if err != nil {
		return fmt.Errorf("rules backtest: %w", err)
	}
	if *against != "" {
		oldSet, err := loadRulesForCLI(e, *against, opts...)
		if err != nil {
			return err
		}
		oldRep, err := backtest.Run(ctx, oldSet, h, rep.From, rep.To, backtest.WithCycleCap(cfg.MaxFiringsPerCycle))
		if err != nil {
			return fmt.Errorf("rules backtest: --against %s: %w", *against, err)
		}
		backtest.Compare(oldRep, rep)
	}
	// The scheduler's share of the desk's budget: sdclient keeps a fifth
	// (at least one request) for people.
	backtest.NoteBudget(rep, cfg.RatePerMin-max(1, cfg.RatePerMin/5))
	ranAt := time.Now()
	if err := writeReport(e, *format, rep); err != nil {
		return err
	}
	if !*keep {
		return nil
	}
	if err := keepReport(ctx, st, rep, ranAt); err != nil {
		return fmt.Errorf("rules backtest: the report is printed but could not be kept for the status pages (--keep=false does not try): %w", err)
	}
	_, err = fmt.Fprintln(e.stderr, "The report is kept in the state store for the status pages' /backtest (--keep=false: not kept).")
	return err
}

// writeReport prints rep in format.
func writeReport(e env, format string, rep *backtest.Report) error {
	switch format {
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "html":
		return statuspage.WriteBacktest(e.stdout, rep)
	}
	return backtest.WriteText(e.stdout, rep)
}

// parseSince reads --since: a Go duration or whole days ("7d").
func parseSince(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 {
			return 0, fmt.Errorf("%q: want whole days such as 7d, or a duration such as 36h", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want whole days such as 7d, or a duration such as 36h", s)
	}
	return d, nil
}

// openHistory opens the state store that dsn names for reading its
// history. A store file that does not exist yet has no history; the file
// is not created.
func openHistory(ctx context.Context, dsn string) (*store.Store, error) {
	if path := store.StateFile(dsn); path != "" && !fileExists(path) {
		return nil, fmt.Errorf("%w (%s does not exist; DESKBOT_STATE names the store deskbot runs with)", backtest.ErrNoHistory, path)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open the state store (DESKBOT_STATE): %w", err)
	}
	return st, nil
}

// keptReportMax is the largest report kept whole: a larger one is kept
// without its per-firing list (which the page does not show), so that
// the overview and /backtest read little.
const keptReportMax = 256 << 10

// keepReport keeps rep in st as the last backtest, which ran at now.
func keepReport(ctx context.Context, st *store.Store, rep *backtest.Report, now time.Time) error {
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	trimmed := false
	if len(body) > keptReportMax && len(rep.Firings) > 0 {
		short := *rep
		short.Firings = []backtest.Firing{}
		if body, err = json.Marshal(&short); err != nil {
			return err
		}
		trimmed = true
	}
	return st.KeepBacktest(ctx, store.Backtest{File: rep.File, RanAt: now, From: rep.From, To: rep.To,
		Firings: rep.Totals.Firings, Trimmed: trimmed, Report: body})
}
