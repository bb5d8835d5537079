package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
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
	if path := sqlitePath(cfg.State); path != "" && !strings.Contains(path, "://") { // not postgres:// (or a scheme the store refuses)
		if err := checkStateFile(path); err != nil {
			return fmt.Errorf("DESKBOT_STATE: %w", err)
		}
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
// and runs them with the ops endpoints until ctx ends.
func serve(ctx context.Context, e env, cfg *config, ln net.Listener, logger *slog.Logger) error {
	reg := newRegistry()

	// The desk: a real one, or the embedded simulator.
	deskURL, apiKey, stopDesk, err := deskEndpoint(cfg, logger)
	if err != nil {
		return err
	}
	defer stopDesk()
	if cfg.DeskURL == "" {
		logger.Info("no DESKBOT_DESK_URL: running the embedded desk simulator", "url", deskURL, "tickets", embeddedTickets)
		if cfg.stateInMemory {
			logger.Info("state kept in memory with the embedded simulator: every run starts like the first (set DESKBOT_STATE to keep it)")
		} else {
			logger.Warn("DESKBOT_STATE persists, but the embedded simulator's desk is generated afresh on every start: "+
				"the ledger and on-call pages there refer to an earlier desk's tickets", "state", cfg.State)
		}
	}
	client, err := sdclient.New(deskURL, apiKey,
		sdclient.WithRatePerMinute(cfg.RatePerMin),
		sdclient.WithListRatePerMinute(cfg.listRate()),
		sdclient.WithLogger(logger),
		sdclient.WithHTTPClient(&http.Client{
			Timeout:   30 * time.Second,
			Transport: scheduler.InstrumentTransport(http.DefaultTransport.(*http.Transport).Clone(), reg),
		}),
	)
	if err != nil {
		return fmt.Errorf("DESKBOT_DESK_URL: %w", err)
	}
	// People's requests (chat, a reload, /readyz) go through the interactive
	// twin, which keeps the reserve; the scheduler polls with client itself.
	interactive := client.Interactive()
	me, err := checkDesk(ctx, interactive)
	if err != nil {
		return err
	}
	logger.Info("connected to the desk", "url", client.BaseURL(), "agent", me.Email)

	st, err := store.Open(ctx, cfg.State)
	if err != nil {
		return fmt.Errorf("DESKBOT_STATE: %w", err)
	}
	defer st.Close()

	rulesPath, err := rulesFile(cfg.Rules)
	if err != nil {
		return err
	}
	loader := &rulesLoader{client: interactive, logger: logger}
	var set atomic.Pointer[rules.Set]
	if rulesPath == "" {
		logger.Info("no rules file (DESKBOT_RULES unset and no rules.yaml here): automation is off")
	} else {
		s, err := loader.load(ctx, rulesPath)
		if err != nil {
			return fmt.Errorf("DESKBOT_RULES: %w", err)
		}
		set.Store(s)
		logger.Info("rules loaded", "file", rulesPath, "rules", len(s.Rules()))
	}

	// On-call: an escalator over the store when the rules have an oncall:
	// section. It pages through the chat transport, built below (the
	// transport needs the router, which needs the escalator).
	pager := &chatPager{}
	var esc *oncall.Escalator
	if s := set.Load(); s != nil && s.OnCall() != nil {
		esc, err = oncall.NewEscalator(s.OnCall(), st, pager, bot.NewOnCallDesk(client),
			oncall.WithLogger(logger.With("component", "oncall")), oncall.WithRegistry(reg))
		if err != nil {
			return err
		}
		logger.Info("on-call paging on", "schedules", len(s.OnCall().Schedules), "policies", len(s.OnCall().Policies))
	}

	// Chat: Slack when configured, else the console on stdin/stdout.
	// The scheduler, built below, tells which decisions its caps held back.
	var sched *scheduler.Scheduler
	expl := scheduler.NewExplainer(scheduler.ClientDesk(interactive), set.Load, st, nil,
		scheduler.ExplainHeldBack(heldBackOf(func() *scheduler.Scheduler { return sched })))
	ropts := []bot.Option{
		bot.WithDeskURL(deskURL),
		bot.WithExplainer(expl),
		bot.WithAcks(storeAcks{st}),
		// Commands may spend the whole rate (the interactive twin uses the
		// reserve too): the Slack transport sizes its workers to it.
		bot.WithDeskBudget(cfg.RatePerMin),
	}
	if esc != nil {
		ropts = append(ropts, bot.WithOnCall(esc))
	}
	if set.Load() != nil {
		// The scheduler (of this replica or the leader) keeps the ticket
		// mirror in the store: /ticket why, mine and unassigned read it.
		ropts = append(ropts, bot.WithMirror(st))
	}
	router, err := bot.NewRouter(bot.NewDeskAdapter(interactive), logger, ropts...)
	if err != nil {
		return err
	}
	var chat chatTransport
	if cfg.slackEnabled() {
		chat, err = bot.NewSlack(router, logger, cfg.SlackBotToken.reveal(), cfg.SlackAppToken.reveal(),
			bot.WithSlackAPIURL(cfg.SlackAPIURL), bot.WithEnvelopeStore(st))
	} else {
		logger.Info("no SLACK_BOT_TOKEN: chat runs on this console; type /ticket help")
		chat, err = bot.NewConsole(router, e.stdin, e.stdout)
	}
	if err != nil {
		return err
	}
	pager.chat = chat // before anything runs: the escalator pages only once started

	// The scheduler, on one leader.
	if s := set.Load(); s != nil {
		var opts []scheduler.Option
		opts = append(opts,
			scheduler.WithBudget(client.BackgroundBudget()),
			scheduler.WithListBudget(client.BackgroundListBudget()),
			scheduler.WithWorkspaces(cfg.WorkspaceIDs...),
			scheduler.WithRegistry(reg),
			scheduler.WithDryRun(cfg.DryRun),
			scheduler.WithMaxFiringsPerCycle(cfg.MaxFiringsPerCycle),
		)
		if esc != nil {
			opts = append(opts, scheduler.WithEscalator(esc, 0))
		}
		leads := func() bool { return true } // SQLite: the file lock decides before start
		switch st.Engine() {
		case store.Postgres:
			el := scheduler.NewPGElector(cfg.State, schedulerLockKey(cfg.State), logger)
			defer el.Close(context.WithoutCancel(ctx))
			opts = append(opts, scheduler.WithElector(el))
			leads = el.Leader
		case store.SQLite:
			if path := sqlitePath(cfg.State); path != "" {
				lock, err := scheduler.LockFile(path)
				if err != nil {
					return fmt.Errorf("DESKBOT_STATE: %w", err)
				}
				defer lock.Unlock()
			}
		}
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "deskbot_scheduler_leader",
			Help: "1 when this replica runs the rules scheduler, 0 while another replica leads (PostgreSQL leader election).",
		}, func() float64 {
			if leads() {
				return 1
			}
			return 0
		}))
		var notifier scheduler.Notifier = chatNotifier{chat}
		if cfg.DryRun {
			notifier = dryRunNotifier{LogNotifier: scheduler.LogNotifier{Logger: logger}, chat: chat}
		}
		sched, err = scheduler.New(logger, scheduler.ClientDesk(client), s, st, notifier, opts...)
		if err != nil {
			return err
		}
	}

	reloads := newReloadStatus(reg, time.Now)
	checks := []readyCheck{
		{"desk", cachedCheck(30*time.Second, 5*time.Second, time.Now, func(ctx context.Context) error { _, err := checkDesk(ctx, interactive); return err })},
		{"store", st.Ping},
		{"chat", func(context.Context) error {
			if !chat.Ready() {
				return errors.New("not connected")
			}
			return nil
		}},
		{"rules", func(ctx context.Context) error {
			if rulesPath != "" && set.Load() == nil {
				return errors.New("not loaded")
			}
			return reloads.check(ctx)
		}},
	}
	if sched != nil {
		// The ticket mirror the rules run on: built, and its feed current.
		checks = append(checks, readyCheck{"mirror", sched.MirrorHealth})
		// Rules over their run-time budget: shown, the process stays ready.
		checks = append(checks, readyCheck{"rule_budgets", func(ctx context.Context) error {
			if err := sched.RuleHealth(ctx); err != nil {
				return degraded{err}
			}
			return nil
		}})
	}
	ops := newOpsServer(ln, reg, checks, logger)
	logger.Info("serving /healthz /readyz /metrics", "addr", ops.Addr())

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	wg.Go(func() { errc <- ops.serve(runCtx) })
	wg.Go(func() {
		err := chat.Run(runCtx)
		if err == nil && runCtx.Err() == nil && !cfg.slackEnabled() {
			switch {
			case sched == nil:
				logger.Info("console input closed and no rules loaded: stopping")
			case isTerminal(e.stdin):
				// Ctrl-D at a terminal: the person leaves, rules or not.
				logger.Info("console closed (Ctrl-D): stopping")
			default:
				// No one at a terminal (stdin is /dev/null in a container,
				// or a pipe that ended): the rules keep running.
				logger.Info("console input closed; the rules keep running until SIGTERM or Ctrl-C")
				return
			}
			cancel()
			return
		}
		if err != nil && runCtx.Err() == nil {
			errc <- fmt.Errorf("chat: %w", err)
		}
	})
	if sched != nil {
		if err := sched.Start(runCtx); err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("scheduler: %w", err)
		}
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	var runErr error
loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case err := <-errc:
			if err != nil {
				runErr = err
				break loop
			}
		case <-hup:
			reloadRules(ctx, logger, loader, rulesPath, &set, sched, esc != nil, reloads)
		}
	}
	logger.Info("stopping: finishing in-flight work; signal again to stop at once", "timeout", stopTimeout)
	cancel()
	if sched != nil {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		if err := sched.Stop(sctx); err != nil {
			logger.Warn("scheduler did not stop cleanly", "err", err)
		}
		scancel()
	}
	wg.Wait()
	logger.Info("stopped")
	return runErr
}

// chatTransport is what run needs of the Slack and console transports.
type chatTransport interface {
	Run(ctx context.Context) error
	Ready() bool
	Alert(ctx context.Context, m bot.AlertMessage) error
	AlertGroup(ctx context.Context, g bot.AlertGroupMessage) error
	AlreadyAlerted(ctx context.Context, channel, key string) (bool, error)
	Page(ctx context.Context, r oncall.PageRequest) error
}

// chatPager is the escalator's oncall.Pager: the chat transport, set once
// it is built and before anything pages.
type chatPager struct{ chat chatTransport }

func (p *chatPager) Page(ctx context.Context, r oncall.PageRequest) error {
	if p.chat == nil {
		return errors.New("page: no chat transport yet")
	}
	return p.chat.Page(ctx, r)
}

// PageGroup hands the steps paging one person in one tick (more than the
// escalator's group_over) to the transport, as one direct message when it
// can group them, else one by one.
func (p *chatPager) PageGroup(ctx context.Context, rs []oncall.PageRequest) []error {
	if g, ok := p.chat.(oncall.PageGrouper); ok {
		return g.PageGroup(ctx, rs)
	}
	errs := make([]error, len(rs))
	for i, r := range rs {
		errs[i] = p.Page(ctx, r)
	}
	return errs
}

var _ oncall.PageGrouper = (*chatPager)(nil)

// PageStopped hands a page that stopped without a click (nobody acknowledged,
// or the ticket was resolved) to the transport, when it can redraw the card.
func (p *chatPager) PageStopped(ctx context.Context, pg oncall.Page) error {
	if n, ok := p.chat.(oncall.StopNotifier); ok {
		return n.PageStopped(ctx, pg)
	}
	return nil
}

var _ oncall.StopNotifier = (*chatPager)(nil)

// chatNotifier fits a chat transport to the scheduler's Notifier (and its
// optional AlertChecker, so resumed firings never post an alert twice, and
// GroupNotifier, so a rule alerting about many tickets posts one message).
type chatNotifier struct{ chat chatTransport }

func (n chatNotifier) Alert(ctx context.Context, a scheduler.Alert) error {
	return n.chat.Alert(ctx, alertMessage(a))
}

func (n chatNotifier) AlertGroup(ctx context.Context, g scheduler.AlertGroup) error {
	m := bot.AlertGroupMessage{Channel: g.Channel, Rule: g.Rule, Alerts: make([]bot.AlertMessage, len(g.Alerts))}
	for i, a := range g.Alerts {
		m.Alerts[i] = alertMessage(a)
	}
	return n.chat.AlertGroup(ctx, m)
}

func alertMessage(a scheduler.Alert) bot.AlertMessage {
	return bot.AlertMessage{Channel: a.Channel, Text: a.Text, Mention: a.Mention, Ticket: a.Ticket, Rule: a.Rule, Key: a.Key}
}

func (n chatNotifier) AlreadyAlerted(ctx context.Context, channel, key string) (bool, error) {
	return n.chat.AlreadyAlerted(ctx, channel, key)
}

// heldBackOf asks the scheduler sched returns (none before it is built, or
// without rules) which decisions its per-cycle caps held back.
type heldBackOf func() *scheduler.Scheduler

func (h heldBackOf) HeldBack(key rules.FiringKey) (scheduler.Held, bool) {
	if s := h(); s != nil {
		return s.HeldBack(key)
	}
	return scheduler.Held{}, false
}

// storeAcks records alert acknowledgements in the store.
type storeAcks struct{ st *store.Store }

func (a storeAcks) Acknowledge(ctx context.Context, key, by string, at time.Time) error {
	_, err := a.st.SetAck(ctx, key, by, at)
	return err
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

// schedulerLockKey is the advisory lock the replicas sharing the PostgreSQL
// state at dsn elect their scheduler leader with. Advisory locks are per
// database, so deskbots that keep separate states in separate schemas of one
// database (search_path) get separate keys and each polls; without a
// search_path the key is the historical one, so a rolling upgrade keeps one
// leader.
func schedulerLockKey(dsn string) int64 {
	const name = "deskbot-scheduler"
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return scheduler.LockKey(name) // the store opened it; cannot happen
	}
	sp := cfg.RuntimeParams["search_path"]
	if sp == "" {
		// options=-c search_path=x (libpq style)
		if _, rest, ok := strings.Cut(cfg.RuntimeParams["options"], "search_path="); ok {
			sp, _, _ = strings.Cut(rest, " ")
		}
	}
	sp = strings.Join(strings.Fields(strings.ReplaceAll(sp, ",", " ")), ",")
	if sp == "" {
		return scheduler.LockKey(name)
	}
	return scheduler.LockKey(name + "/" + sp)
}

// checkStateFile says plainly what is wrong with a SQLite state path before
// SQLite's own "unable to open database file" would: a directory, a missing
// or unwritable directory (SQLite writes a journal and deskbot a lock file
// next to the database).
func checkStateFile(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; want a database file such as %s", path, filepath.Join(path, "deskbot.db"))
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s of %s does not exist", dir, path)
	case err != nil:
		return fmt.Errorf("check the directory of %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory, so %s cannot be created", dir, path)
	case syscall.Access(dir, 2 /* W_OK */) != nil:
		return fmt.Errorf("the directory %s is not writable by this user; SQLite keeps its journal next to %s", dir, path)
	}
	return nil
}

// sqlitePath extracts the file of a SQLite DSN ("" for in-memory).
func sqlitePath(dsn string) string {
	p := dsn
	for _, prefix := range []string{"sqlite://", "sqlite:", "file:"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			p = rest
			break
		}
	}
	p, _, _ = strings.Cut(p, "?")
	if p == "" || p == ":memory:" {
		return ""
	}
	return p
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
