package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// Embedded-default settings: the simulated desk a new user meets.
const (
	embeddedSeed    = 1
	embeddedTickets = 200
	stopTimeout     = 15 * time.Second
)

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
	if err := store.CheckStateFile(cfg.State); err != nil {
		return fmt.Errorf("DESKBOT_STATE: %w", err)
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
	d, err := connectDesk(ctx, cfg, logger, announceDesk(cfg, logger), sdclient.WithHTTPClient(instrumentedHTTPClient(reg)))
	if err != nil {
		return err
	}
	defer d.stop()
	logger.Info("connected to the desk", "url", d.client.BaseURL(), "agent", d.me.Email)
	st, err := store.Open(ctx, cfg.State)
	if err != nil {
		return fmt.Errorf("DESKBOT_STATE: %w", err)
	}
	defer st.Close()
	live, err := loadLiveRules(ctx, cfg, d.interactive, reg, logger)
	if err != nil {
		return err
	}
	parts, err := newChatAndScheduler(ctx, e, cfg, d, st, live, reg, logger)
	if err != nil {
		return err
	}
	defer parts.close(ctx)
	ops := newOpsServer(ln, reg, readyChecks(d, st, live, parts), logger)
	logger.Info("serving /healthz /readyz /metrics", "addr", ops.Addr())
	return runComponents(ctx, logger, ops,
		chatRunner{chat: parts.chat, console: !cfg.slackEnabled(), rulesRun: parts.sched != nil, stdin: e.stdin, logger: logger},
		schedulerRunner{sched: parts.sched, logger: logger},
		newReloader(live, parts.sched, parts.esc != nil, logger))
}

// reloadRules swaps in a new rules file on SIGHUP; a bad file keeps the old
// rules, logs every error and records the failure in rs (/metrics,
// /readyz). A good reload is logged once, by the last line.
func reloadRules(ctx context.Context, logger *slog.Logger, loader *rulesLoader, path string, set *atomic.Pointer[rules.Set], sched *scheduler.Scheduler, oncallOn bool, rs *reloadStatus) {
	if path == "" {
		logger.Warn("SIGHUP: no rules file to reload")
		return
	}
	logger.Debug("SIGHUP: reloading the rules file", "file", path)
	s, err := loader.load(ctx, path)
	if err != nil {
		var le *rules.LoadError
		if errors.As(err, &le) && len(le.Errors) > 0 {
			for _, e := range le.Errors {
				logger.Error("SIGHUP: rules file has an error; keeping the old rules", "error", e.Error())
			}
			rs.failed(le.Errors[0].Error())
		} else {
			logger.Error("SIGHUP: cannot read the rules file; keeping the old rules", "file", path, "err", err)
			rs.failed(err.Error())
		}
		return
	}
	if sched != nil {
		// The scheduler hands the new oncall: section to the escalator.
		if err := sched.Reload(s); err != nil {
			logger.Error("SIGHUP: the new rules cannot run; keeping the old rules", "err", err)
			rs.failed(err.Error())
			return
		}
		if !oncallOn && s.OnCall() != nil {
			logger.Warn("SIGHUP: the rules file now has an oncall: section; restart deskbot to turn on-call paging on")
		}
	} else {
		logger.Warn("SIGHUP: rules loaded, but the scheduler starts only at start-up; restart deskbot to run them")
	}
	set.Store(s)
	rs.succeeded()
	logger.Info("SIGHUP: rules reloaded", "file", path, "rules", len(s.Rules()))
}

// customFieldsTimeout bounds the read of the desk's custom fields before a
// rules file loads: a reload must not wait for a busy rate budget.
const customFieldsTimeout = 10 * time.Second

// rulesLoader loads the rules file with the desk's custom ticket fields
// declared, so that queries can filter on them. It reads them through the
// interactive budget (a reload is an operator waiting, and must not queue
// behind the scheduler's polls) within customFieldsTimeout; when they cannot
// be read it warns and uses the fields it read last, so a reload during a
// desk outage does not refuse a file that loaded before. Only the run loop
// uses it, so it needs no lock.
type rulesLoader struct {
	client *sdclient.Client
	logger *slog.Logger
	last   map[string]filter.Kind
}

func (l *rulesLoader) load(ctx context.Context, path string) (*rules.Set, error) {
	fctx, cancel := context.WithTimeout(ctx, customFieldsTimeout)
	custom, err := l.client.CustomFields(fctx)
	cancel()
	switch {
	case err == nil:
		l.last = custom
	case l.last != nil:
		l.logger.Warn("cannot read the desk's custom ticket fields; using those read before", "err", err)
		custom = l.last
	default:
		l.logger.Warn("cannot read the desk's custom ticket fields; queries cannot filter on them", "err", err)
	}
	return rules.LoadFile(path, rules.WithCustomFields(custom))
}

// rulesFile resolves DESKBOT_RULES: the named file, or rules.yaml if present.
func rulesFile(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", fmt.Errorf("DESKBOT_RULES: %w", err)
		}
		return configured, nil
	}
	if _, err := os.Stat("rules.yaml"); err == nil {
		return "rules.yaml", nil
	}
	return "", nil
}

// checkDesk asks the desk who owns the API key: the start-up check that turns
// a wrong key into one clear line instead of a stack of retries.
func checkDesk(ctx context.Context, c *sdclient.Client) (*sdclient.Agent, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	me, _, err := c.Interactive().Agents.Me(ctx)
	switch {
	case err == nil:
		return me, nil
	case errors.Is(err, sdclient.ErrUnauthorized):
		return nil, errors.New("the desk rejected the API key (DESKBOT_DESK_API_KEY)")
	case errors.Is(err, sdclient.ErrForbidden):
		return nil, errors.New("the desk does not let this API key read its own agent (GET /agents/me); use an agent's key")
	case errors.Is(err, sdclient.ErrNotFound):
		return nil, fmt.Errorf("%s answers 404 to GET /agents/me: is DESKBOT_DESK_URL the desk's base URL, such as https://acme.freshservice.com?", c.BaseURL())
	default:
		return nil, fmt.Errorf("cannot reach the desk at %s: %w", c.BaseURL(), err)
	}
}

// cachedCheck runs check at most once per okTTL while it passes, so that
// frequent /readyz probes do not spend the desk's request budget, and at most
// once per failTTL while it fails, so that a desk that is back is seen soon.
func cachedCheck(okTTL, failTTL time.Duration, now func() time.Time, check func(context.Context) error) func(context.Context) error {
	var (
		mu   sync.Mutex
		last time.Time
		err  error
	)
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		ttl := okTTL
		if err != nil {
			ttl = failTTL
		}
		if !last.IsZero() && now().Sub(last) < ttl {
			return err
		}
		err, last = check(ctx), now()
		return err
	}
}

// deskEndpoint is the desk to talk to: DESKBOT_DESK_URL with its key, or,
// when it is unset, the embedded simulator; stop ends the simulator.
func deskEndpoint(cfg *config, logger *slog.Logger) (url, apiKey string, stop func(), err error) {
	if cfg.DeskURL != "" {
		return cfg.DeskURL, cfg.DeskAPIKey.reveal(), func() {}, nil
	}
	// The simulator limits requests as a real desk does (the smallest
	// plan's 100 a minute, or deskbot's own budget when that is larger), so
	// that its X-Ratelimit-* headers, and deskbot_desk_rate_limit_remaining,
	// are real.
	url, stop, err = startEmbeddedDesk(logger, sdsim.WithRateLimit(max(embeddedRateLimit, cfg.RatePerMin)))
	if err != nil {
		return "", "", nil, err
	}
	return url, sdsim.DefaultAPIKey, stop, nil
}

// embeddedRateLimit is the embedded simulator's account-wide rate limit,
// in requests a minute: the desk's smallest plan.
const embeddedRateLimit = 100

// startEmbeddedDesk serves a seeded simulator on a loopback port.
func startEmbeddedDesk(logger *slog.Logger, opts ...sdsim.Option) (string, func(), error) {
	desk := sdsim.New(append([]sdsim.Option{sdsim.WithGenerated(embeddedSeed, embeddedTickets)}, opts...)...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		desk.Close()
		return "", nil, fmt.Errorf("embedded desk: %w", err)
	}
	srv := &http.Server{
		Handler:           desk.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		desk.Close()
	}, nil
}
