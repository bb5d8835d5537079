package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// stopTimeout bounds the graceful stop: in-flight firings finish within it.
const stopTimeout = 15 * time.Second

// runUsage is `deskbot run --help`: the command takes no flags; it is
// configured by the environment of DESIGN.md section 3.
const runUsage = `Usage: deskbot [run]

Runs the chat bot, the rules scheduler and /healthz /readyz /metrics until
SIGINT or SIGTERM; SIGHUP reloads the rules file. Configured by the
environment (an empty variable counts as unset):

  DESKBOT_DESK_URL           the desk's base URL (unset: an embedded simulator)
  DESKBOT_DESK_API_KEY       the desk's API key (required with DESKBOT_DESK_URL)
  DESKBOT_DESK_RATE_PER_MIN  requests to the desk per minute (default 60)
  DESKBOT_DESK_LIST_RATE_PER_MIN
                             ticket lists per minute, within that (default: two fifths of it)
  DESKBOT_WORKSPACE_IDS      comma list of workspaces to poll (default: the account's default)
  SLACK_BOT_TOKEN            xoxb- token (unset: console chat on stdin/stdout)
  SLACK_APP_TOKEN            xapp- token for socket mode
  DESKBOT_SLACK_API_URL      Slack Web API base (default https://slack.com/api/)
  DESKBOT_RULES              rules file (default rules.yaml if present, else none)
  DESKBOT_STATE              state: a file, sqlite:PATH or postgres://... (default deskbot.db;
                             in memory with the embedded simulator)
  DESKBOT_HTTP_ADDR          listen address of /healthz /readyz /metrics (default 127.0.0.1:9717)
  DESKBOT_DRY_RUN            true: act on nothing, log what it would have done (default false)
  DESKBOT_MAX_FIRINGS_PER_CYCLE
                             firings one poll starts across rules; the rest fire in later
                             polls (default 50; 0: only each rule's max_firings_per_cycle)
  DESKBOT_TICKET_REACTION    emoji whose reaction makes a ticket of a message (default ticket; off: none)
  DESKBOT_SLACK_ALLOWED_TEAMS
                             other Slack teams (T… ids) whose people act as themselves in shared
                             channels (default none: only the bot's own team and organisation)
  DESKBOT_LOG_LEVEL          debug, info, warn or error (default info)
  DESKBOT_LOG_FORMAT         text or json (default text)
`

// cmdRun runs the bot, the scheduler and the ops endpoints until ctx ends.
func cmdRun(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "run", "[run]")
	fs.Usage = func() { fmt.Fprint(fs.Output(), runUsage) }
	if err := parseFlags(fs, args); err != nil {
		return usageErr(fs, "run", err)
	}
	if fs.NArg() > 0 {
		return usageErr(fs, "run", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	cfg, err := loadConfig(ctx, e.getenv)
	if err != nil {
		return err
	}
	// Every variable is checked before the first log line, so that a bad
	// one is the only line printed.
	if err := store.CheckStateFile(cfg.State); err != nil {
		return fmt.Errorf("DESKBOT_STATE: %w", err)
	}
	if _, err := rulesFile(cfg.Rules); err != nil {
		return err
	}
	logger := newLogger(e.stderr, cfg.LogLevel, cfg.LogFormat)
	// Listen first: an address in use is a configuration error, said
	// before the desk is asked or the store opened.
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("DESKBOT_HTTP_ADDR: listen on %s: %w", cfg.HTTPAddr, err)
	}
	defer ln.Close()
	err = serve(ctx, e, cfg, ln, logger)
	if err != nil && cfg.LogFormat == "json" {
		// One JSON event with level ERROR that collectors and alerts on
		// level see, rather than a bare text line among JSON ones.
		logger.Error("deskbot stopped", "err", oneLine(err.Error()))
		return exitError{code: 1}
	}
	return err
}

// serve wires the desk, the store, the rules, the chat and the scheduler,
// and runs them with the ops endpoints until ctx ends. It only wires: what
// to build is decided by the constructors it calls.
func serve(ctx context.Context, e env, cfg *config, ln net.Listener, logger *slog.Logger) error {
	reg := newRegistry()
	d, err := connectDesk(ctx, cfg, logger, announceDesk(cfg, logger), sdclient.WithHTTPClient(deskHTTPClient()), sdclient.WithMetrics(reg))
	if err != nil {
		return err
	}
	defer d.stop()
	if err := d.reach.failed(); err != nil {
		logger.Warn("the desk does not answer: deskbot starts without it and retries; the rules start when it answers", "err", err)
	}
	st, err := store.Open(ctx, cfg.State)
	if err != nil {
		return fmt.Errorf("DESKBOT_STATE: %w", err)
	}
	defer st.Close()
	live, err := loadLiveRules(ctx, cfg, d.interactive, d.shared, st, reg, logger)
	if err != nil {
		return err
	}
	parts, err := newChatAndScheduler(ctx, e, cfg, d, st, live, reg, logger)
	if err != nil {
		return err
	}
	defer parts.close(ctx)
	ops := newOpsServer(ln, reg, readyChecks(d, st, live, parts), logger)
	pages, err := newStatusPages(cfg, ops.Addr(), d, st, live, parts, reg, logger)
	if err != nil {
		return fmt.Errorf("status pages: %w", err)
	}
	ops.mountPages(pages)
	logger.Info("serving /healthz /readyz /metrics and the status pages", "addr", ops.Addr(), "pages", pagesAccess(ops.Addr(), cfg.UIToken != ""))
	return runComponents(ctx, logger, ops, d.reach, pages,
		chatRunner{chat: parts.chat, console: !cfg.slackEnabled(), rulesRun: parts.sched != nil, stdin: e.stdin, logger: logger},
		schedulerRunner{sched: parts.sched, deskUp: d.reach.up(), logger: logger},
		newReloader(live, parts.sched, parts.esc != nil, logger))
}
