package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/planreport"
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
		scheduler.WithFeed(feed.WithWorkspaces(cfg.WorkspaceIDs...)),
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
	p := planreport.Report{
		Source: file, Set: set, Outlook: *outlook, Cycle: cy, LedgerNote: ledgerNote,
		Workspaces: max(1, len(cfg.WorkspaceIDs)), Budget: client.BackgroundBudget(), Rate: cfg.RatePerMin,
	}
	head := whichDesk(cfg, client.BaseURL())
	if cfg.DeskURL != "" {
		head = fmt.Sprintf("Desk %s (DESKBOT_DESK_URL); nothing on it is changed.\n\n", strings.TrimSuffix(client.BaseURL(), "/api/v2/"))
	}
	fmt.Fprint(e.stdout, head)
	if err := p.Write(e.stdout); err != nil {
		return err
	}
	// The digests over the mirror the plan's cycle filled.
	m := sched.Memory()
	writeDigestPreviews(e.stdout, rules.PreviewDigests(m.Set, m.Feed.Snapshot(), outlook.At, m.People))
	return nil
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
