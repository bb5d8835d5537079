package main

import (
	"context"
	"encoding/json"
	"errors"
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

const backtestSynopsis = "rules backtest FILE [--since 7d] [--against OLD_FILE] [--format text|json|html] [--supervisor=false] [--custom-field NAME:KIND ...] [--status ID:NAME ...]"

// cmdRulesBacktest replays FILE over the history recorded in the state
// store (DESKBOT_STATE, read only) with the scheduler's planning step and
// reports what it would have done; with --against, what it changes
// compared with OLD_FILE. It sends and writes nothing.
func cmdRulesBacktest(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "rules backtest", backtestSynopsis)
	sinceFlag := fs.String("since", "7d", "how far back to replay: 7d, 36h (the history's start at the earliest)")
	against := fs.String("against", "", "an older rules file to compare with over the same history")
	format := fs.String("format", "text", "text, json or html")
	supervisor := fs.Bool("supervisor", true, "also replay each rule as the desk's hourly supervisor would, and say how much later it fires")
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
	h, closeHistory, err := openHistory(ctx, cfg.State)
	if err != nil {
		return fmt.Errorf("rules backtest: %w", err)
	}
	defer closeHistory()

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
	switch *format {
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
func openHistory(ctx context.Context, dsn string) (history.Reader, func(), error) {
	if path := store.StateFile(dsn); path != "" && !fileExists(path) {
		return nil, nil, fmt.Errorf("%w (%s does not exist; DESKBOT_STATE names the store deskbot runs with)", backtest.ErrNoHistory, path)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open the state store (DESKBOT_STATE): %w", err)
	}
	h, ok := any(st).(history.Reader)
	if !ok {
		_ = st.Close()
		return nil, nil, errors.New("this build's state store keeps no history of the desk's changes")
	}
	return h, func() { _ = st.Close() }, nil
}
