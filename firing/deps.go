package firing

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Cycle is what a cycle's firings share and none changes.
type Cycle struct {
	Set   *rules.Set
	Rules []*rules.Rule // the cycle's rules, in file order (cascades are noted among them)
	Now   time.Time     // the cycle's time: claims and retries count from it
	Log   *slog.Logger
}

// Deps is what performing firings needs; the scheduler provides it.
type Deps struct {
	Ledger Ledger
	// Desk is the desk as the cycle sees it: its requests waiting for
	// the rate budget give up when the scheduler stops.
	Desk Desk
	// Count counts the desk requests behind one answer (the budget).
	Count  func(resp *sdclient.Response, err error)
	Source Source // re-reads, and the mirror kept current
	// Notifier posts alerts (grouped, when it is a GroupNotifier; it
	// tells whether a resumed firing's alert is there when it is an
	// AlertChecker).
	Notifier Notifier
	// DMs sends direct messages; nil: a dm: is posted as an alert to its
	// fallback channel, saying for whom it was.
	DMs   DMSender
	Pages Pages // nil: no escalator; a page action is refused
	// Marks signs and checks the markers of notes and replies.
	Marks    func(ctx context.Context) (*store.Marks, error)
	Now      func() time.Time
	Stopping func() bool // the scheduler is stopping: start no ticket
	// Lease is how long a claim stays reserved; ActionTimeout bounds
	// each action, on a context of its own so that a stop does not cut
	// a firing in half.
	Lease, ActionTimeout time.Duration
	Metrics              Metrics
	// MatchedSince is when ticket began to match rule, as the cycles saw
	// it (the claim records it); nil: the cycle's now.
	MatchedSince func(rule string, ticket int64, now time.Time) time.Time
}

// Metrics are the counters firings move (the scheduler registers them:
// Collectors).
type Metrics struct {
	Decisions   *prometheus.CounterVec // rule, outcome
	Actions     *prometheus.CounterVec // kind, outcome
	AlertGroups *prometheus.CounterVec // rule
	Cascades    *prometheus.CounterVec // rule
	Pages       *prometheus.CounterVec // rule, outcome
	// The episodes' (Episodes): ended, and the end checks of tickets
	// missing from the mirror.
	EpisodesEnded *prometheus.CounterVec // rule
	EndChecks     *prometheus.CounterVec // rule, outcome
}

// NewMetrics makes the counters firings move, under the scheduler's
// names.
func NewMetrics() Metrics {
	return Metrics{
		Decisions: counterVec("deskbot_scheduler_decisions_total",
			"Decisions by rule and outcome (fired, already_fired, stale, dry_run; error: the rule failed; failed: the desk, the chat or the ledger refused or failed; deferred: waiting, not failed: held back by a per-cycle cap, queued behind more urgent work, waiting for the request budget, or stopping).", "rule", "outcome"),
		Actions: counterVec("deskbot_scheduler_actions_total",
			"Actions by kind (note, reply, update, alert, page, dm) and outcome (ok, error, already_done; deferred: not sent, waiting for the request budget or stopping: it runs in a later cycle).", "kind", "outcome"),
		AlertGroups: counterVec("deskbot_scheduler_alert_groups_total",
			"Grouped alert messages posted (one message naming every ticket a rule alerted about in a cycle, when more than its group_over), by rule.", "rule"),
		Cascades: counterVec("deskbot_scheduler_cascades_deferred_total",
			"Rules that started to match because of the bot's own write in the same cycle, deferred to a later cycle.", "rule"),
		Pages: counterVec("deskbot_scheduler_pages_total",
			"Page actions by rule and outcome (started: a new on-call page; existing: the episode's page was already started).", "rule", "outcome"),
		EpisodesEnded: counterVec("deskbot_scheduler_episodes_ended_total",
			"Episodes ended by complete polls, by rule.", "rule"),
		EndChecks: counterVec("deskbot_scheduler_episode_end_checks_total",
			"Open episodes of tickets missing from the mirror, by rule and outcome: ended (a re-read showed the ticket gone or no longer matching), still_matching, deferred (no re-reads left in the cycle, or waiting for the request budget) or error.", "rule", "outcome"),
	}
}

// Collectors are m's collectors, to register.
func (m Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Decisions, m.Actions, m.AlertGroups, m.Cascades, m.Pages, m.EpisodesEnded, m.EndChecks}
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// Pages starts the on-call pages of page actions.
type Pages interface {
	// Start starts the page spec names (created: false when the episode's
	// page exists).
	Start(ctx context.Context, spec oncall.PageSpec, now time.Time) (p oncall.Page, created bool, err error)
	// Tick takes the escalation steps due now (the first steps of pages
	// started without them).
	Tick(ctx context.Context) error
}

// Conversations reads every conversation of a ticket, counting each
// request with count.
func Conversations(ctx context.Context, desk Desk, count func(*sdclient.Response, error), id int64) ([]*sdclient.Conversation, error) {
	const perPage = 100
	var out []*sdclient.Conversation
	for page := 1; page <= 1000; page++ {
		list, resp, err := desk.ListConversations(ctx, id, &sdclient.ListOptions{Page: page, PerPage: perPage})
		count(resp, err)
		if err != nil {
			return nil, fmt.Errorf("list conversations of ticket %d: %w", id, err)
		}
		out = append(out, list...)
		if len(list) < perPage {
			break
		}
	}
	if out == nil {
		out = []*sdclient.Conversation{}
	}
	return out, nil
}

// conversations reads every conversation of a ticket.
func (ex *execution) conversations(ctx context.Context, id int64) ([]*sdclient.Conversation, error) {
	return Conversations(ctx, ex.d.Desk, ex.d.Count, id)
}
