package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/console"
	"github.com/deskbot/deskbot/bot/follow"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/history/recorder"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/statuspage"
	"github.com/deskbot/deskbot/store"
	"github.com/prometheus/client_golang/prometheus"
)

// The constructors serve wires: each decides what to build from the
// configuration, so that serve itself holds no policy.

// chatParts are the parts that page, alert and answer through the chat.
type chatParts struct {
	chat  chatTransport
	esc   *oncall.Escalator    // nil without an oncall: section
	sched *scheduler.Scheduler // nil without rules
	lead  *store.Leadership    // the scheduler's, nil without rules
	// commands are the chat commands answered, for the status pages.
	commands *statuspage.Commands
	router   *bot.Router      // names on-call members for the status pages
	mirror   *feed.LiveMirror // the ticket mirror as people (and the status pages) read it
}

// newChatAndScheduler builds the on-call escalator, the command router, the
// chat transport and the scheduler. They need each other, and this is the
// one place that closes the two cycles:
//   - the escalator pages through the transport, which serves the router,
//     which acknowledges pages through the escalator: the escalator gets a
//     chatPager, filled with the transport once it is built and before
//     anything runs (the escalator pages only once started);
//   - /ticket why (the router's explainer) tells which decisions the
//     scheduler's caps held back, and the scheduler alerts through the
//     transport: the explainer asks a lateScheduler, filled once the
//     scheduler is built (nil without rules: nothing is held back);
//   - the router reads the ticket mirror, and hands it what deskbot
//     changed, through a feed.LiveMirror, which reads the store until the
//     scheduler's feed is attached and then its memory while it leads.
func newChatAndScheduler(ctx context.Context, e env, cfg *config, d *desk, st *store.Store, live *liveRules, reg *prometheus.Registry, logger *slog.Logger) (*chatParts, error) {
	pager := &chatPager{}
	esc, err := newEscalator(live.set.Load(), st, pager, d.client, reg, logger)
	if err != nil {
		return nil, err
	}
	held := &lateScheduler{}
	mirror := feed.NewLiveMirror(st)
	router, err := newRouter(ctx, cfg, d, st, mirror, live, esc, held, logger)
	if err != nil {
		return nil, err
	}
	commands := statuspage.NewCommands()
	chat, err := newTransport(e, cfg, timedRouter{router, commands}, st, logger)
	if err != nil {
		return nil, err
	}
	pager.chat = chat
	p := &chatParts{chat: chat, esc: esc, commands: commands, router: router, mirror: mirror}
	if s := live.set.Load(); s != nil {
		if p.sched, p.lead, err = newScheduler(ctx, cfg, d.client, d.shared, st, s, esc, chat, reg, logger); err != nil {
			return nil, err
		}
		held.held = p.sched.Memory().Held
		mirror.Attach(p.sched.Feed())
	}
	return p, nil
}

// close gives the scheduler's leadership up.
func (p *chatParts) close(ctx context.Context) {
	if p.lead != nil {
		_ = p.lead.Close(context.WithoutCancel(ctx))
	}
}

// newEscalator is the on-call escalator over the store when the rules have
// an oncall: section, else nil.
func newEscalator(set *rules.Set, st *store.Store, pager oncall.Pager, client *sdclient.Client, reg *prometheus.Registry, logger *slog.Logger) (*oncall.Escalator, error) {
	if set == nil || set.OnCall() == nil {
		return nil, nil
	}
	esc, err := oncall.NewEscalator(set.OnCall(), st, pager, oncall.ClientDesk(client),
		oncall.WithLogger(logger.With("component", "oncall")), oncall.WithRegistry(reg))
	if err != nil {
		return nil, err
	}
	logger.Info("on-call paging on", "schedules", len(set.OnCall().Schedules), "policies", len(set.OnCall().Policies))
	return esc, nil
}

// newRouter is the chat command router: the desk through the interactive
// client, /ticket why, acknowledgements, on-call and the ticket mirror.
func newRouter(ctx context.Context, cfg *config, d *desk, st *store.Store, mirror *feed.LiveMirror, live *liveRules, esc *oncall.Escalator, held firing.HeldBackReader, logger *slog.Logger) (*bot.Router, error) {
	expl := firing.NewExplainer(schedulerDesk(d.interactive, d.shared), live.set.Load, st, nil, firing.ExplainHeldBack(held),
		firing.ExplainRuns(st))
	opts := []bot.Option{
		bot.WithDeskURL(d.url),
		bot.WithExplainer(expl),
		bot.WithAcks(storeAcks{st}),
		bot.WithMessageLedger(st), // tickets from messages: one per message, across replicas
		// Commands may spend the whole rate (the interactive twin uses the
		// reserve too): the Slack transport sizes its workers to it.
		bot.WithDeskBudget(cfg.RatePerMin),
	}
	// Thread copies are signed with the installation's secret, as the
	// scheduler (over the same store) checks them (issue 27).
	marks, err := st.Marks(ctx)
	if err != nil {
		return nil, err
	}
	opts = append(opts, bot.WithMarks(marks))
	if esc != nil {
		opts = append(opts, bot.WithOnCall(esc))
	}
	if live.set.Load() != nil {
		// The scheduler (of this replica or the leader) keeps the ticket
		// mirror: /ticket why, mine, unassigned, search and the Home tab
		// read it (from the scheduler's memory while it leads here, else
		// from the store), and what deskbot changes goes into it at once.
		opts = append(opts, bot.WithMirror(mirror), bot.WithMirrorUpdates(mirror))
	}
	var desk bot.Desk = bot.NewDeskAdapter(d.interactive)
	if d.shared != nil {
		desk = sharedBotDesk{bot.NewDeskAdapter(d.interactive), d.shared}
	}
	return bot.NewRouter(desk, logger, opts...)
}

// newTransport is the chat transport: Slack when configured, else the
// console on stdin/stdout. (The one place that names the transports.)
func newTransport(e env, cfg *config, router timedRouter, st *store.Store, logger *slog.Logger) (chatTransport, error) {
	if cfg.slackEnabled() {
		return slackchat.New(router, logger, cfg.SlackBotToken.reveal(), cfg.SlackAppToken.reveal(),
			slackchat.WithAPIURL(cfg.SlackAPIURL), slackchat.WithEnvelopeStore(st), slackchat.WithTicketReaction(cfg.ticketReaction()),
			// People of other organisations in shared channels act as
			// nobody of ours unless their team is listed.
			slackchat.WithAllowedTeams(cfg.SlackAllowedTeams...),
			// Live threads: alerts and tickets from messages are linked
			// to their thread; replies there go to the ticket.
			slackchat.WithThreads(st, router))
	}
	logger.Info("no SLACK_BOT_TOKEN: chat runs on this console; type /ticket help")
	return console.New(router, e.stdin, e.stdout)
}

// newScheduler is the rules scheduler on the store's leadership (one
// scheduler per state: a second process on a SQLite file is refused here),
// alerting through chat, or logging only under DESKBOT_DRY_RUN.
func newScheduler(ctx context.Context, cfg *config, client *sdclient.Client, sh *deskShared, st *store.Store, set *rules.Set, esc *oncall.Escalator, chat chatTransport, reg *prometheus.Registry, logger *slog.Logger) (*scheduler.Scheduler, *store.Leadership, error) {
	lead, err := st.Leadership(ctx, logger)
	if err != nil {
		return nil, nil, fmt.Errorf("DESKBOT_STATE: %w", err)
	}
	registerLeaderMetric(reg, lead)
	opts := []scheduler.Option{
		scheduler.WithBudget(client.BackgroundBudget()),
		scheduler.WithListBudget(client.BackgroundListBudget()),
		scheduler.WithFeed(feed.WithWorkspaces(cfg.WorkspaceIDs...)),
		scheduler.WithRegistry(reg),
		scheduler.WithDryRun(cfg.DryRun),
		scheduler.WithMaxFiringsPerCycle(cfg.MaxFiringsPerCycle),
		scheduler.WithElector(lead),
	}
	if esc != nil {
		opts = append(opts, scheduler.WithEscalator(esc, 0))
	}
	if tp, ok := chat.(follow.ThreadPoster); ok && !cfg.DryRun {
		// Live threads: the desk's public replies and status changes of
		// linked tickets are posted in their threads (Slack only).
		opts = append(opts, scheduler.WithSubscriber(follow.NewThreads(firing.ClientDesk(client), st, tp, st, follow.WithLogger(logger))))
	}
	// The ticket history for rules backtest: what the feed saw, kept for
	// DESKBOT_HISTORY (0: none, and what was is removed).
	opts = append(opts, scheduler.WithSubscriber(recorder.New(st, recorder.WithRetention(cfg.History), recorder.WithLogger(logger))))
	// Digests on the scheduler's ticks (so on the leader only), direct
	// messages for its firings: both through the chat.
	opts = append(opts,
		scheduler.WithTickFollower(follow.NewDigests(chat, st, follow.WithLogger(logger), follow.WithDryRun(cfg.DryRun))),
		scheduler.WithDMs(follow.NewDMs(chat)))
	var notifier firing.Notifier = chatNotifier{chat}
	if cfg.DryRun {
		notifier = dryRunNotifier{LogNotifier: firing.LogNotifier{Logger: logger}, chat: chat}
	}
	sched, err := scheduler.New(logger, schedulerDesk(client, sh), set, st, notifier, opts...)
	if err != nil {
		_ = lead.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return sched, lead, nil
}

// registerLeaderMetric exports whether this replica runs the scheduler.
func registerLeaderMetric(reg *prometheus.Registry, lead *store.Leadership) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "deskbot_scheduler_leader",
		Help: "1 when this replica runs the rules scheduler, 0 while another replica leads (PostgreSQL leader election).",
	}, func() float64 {
		if lead.Leader() {
			return 1
		}
		return 0
	}))
}

// deskCheck is the desk's finding of /readyz: until the desk has answered
// the start-up check, why not and when it is tried next; then the desk
// asked at most every 30s while it answers (every 5s while it does not).
func deskCheck(d *desk) func(context.Context) error {
	asked := cachedCheck(30*time.Second, 5*time.Second, time.Now, func(ctx context.Context) error { _, err := checkDesk(ctx, d.interactive); return err })
	return func(ctx context.Context) error {
		if err := d.reach.status(); err != nil {
			return err
		}
		return asked(ctx)
	}
}

// readyChecks are the dependencies /readyz reports on: the desk (asked at
// most every 30s while it answers), the store, the chat, the rules, and with
// a scheduler its mirror and the rules' run-time budgets.
func readyChecks(d *desk, st *store.Store, live *liveRules, p *chatParts) []readyCheck {
	checks := []readyCheck{
		{"desk", deskCheck(d)},
		{"store", st.Ping},
		{"chat", func(context.Context) error {
			if !p.chat.Ready() {
				return errors.New("not connected")
			}
			return nil
		}},
		{"rules", live.check},
	}
	if p.sched == nil {
		return checks
	}
	return append(checks,
		// The ticket mirror the rules run on: built, and its feed current.
		readyCheck{"mirror", p.sched.MirrorHealth},
		// Rules over their run-time budget: shown, the process stays ready.
		readyCheck{"rule_budgets", func(ctx context.Context) error {
			if err := p.sched.RuleHealth(ctx); err != nil {
				return degraded{err}
			}
			return nil
		}})
}
