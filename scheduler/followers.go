package scheduler

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// The feed's other followers live beside the chat they serve (bot/follow):
// live threads subscribe to the feed's changes, digests follow the
// scheduler's ticks on the leader, and direct messages are sent for the
// execution step (firing.DMSender). The scheduler declares what it calls
// of them and calls them; it never imports them.

// WithSubscriber has sub told, after each sync, the tickets the change
// feed saw change (live threads).
func WithSubscriber(sub feed.Subscriber) Option {
	return func(cfg *config) {
		if sub != nil {
			cfg.feed = append(cfg.feed, feed.WithSubscriber(sub))
		}
	}
}

// WithDMs sends the rules' direct messages through d. Without it a dm:
// is posted as an alert to its fallback channel, saying for whom it was.
func WithDMs(d firing.DMSender) Option { return func(cfg *config) { cfg.dms = d } }

// TickFollower follows the scheduler's ticks on the leader, beside the
// rules, over the mirror as the tick's sync left it (digests).
type TickFollower interface {
	// Due reports whether it has work at now under set: a tick with no
	// rule due still runs (and syncs the mirror) when it has.
	Due(set *rules.Set, now time.Time) bool
	// FollowTick does its work at t.Now.
	FollowTick(ctx context.Context, t Tick)
}

// Tick is what a TickFollower is given at each tick: the time, the rules,
// the mirror after the sync and what the scheduler knows without a desk
// request.
type Tick struct {
	Now     time.Time
	Set     *rules.Set
	Tickets []*sdclient.Ticket // the mirror's tickets, by id
	People  rules.People       // the names the scheduler has looked up (groups for digests)
	// Runs is where the rules' last runs are kept (in memory in a dry
	// run): a follower keeps its own schedules there, so that restarts and
	// new leaders carry them on.
	Runs firing.RuleRuns
}

// WithTickFollower has f follow the scheduler's ticks (digests).
func WithTickFollower(f TickFollower) Option {
	return func(cfg *config) {
		if f != nil {
			cfg.tickers = append(cfg.tickers, f)
		}
	}
}

// ticksDue reports whether a tick follower has work at now.
func (s *Scheduler) ticksDue(set *rules.Set, now time.Time) bool {
	for _, f := range s.cfg.tickers {
		if f.Due(set, now) {
			return true
		}
	}
	return false
}

// followTick runs the tick followers at now over the mirror's tickets.
func (s *Scheduler) followTick(ctx context.Context, now time.Time, set *rules.Set, tickets []*sdclient.Ticket) {
	t := Tick{Now: now, Set: set, Tickets: tickets, People: &s.people, Runs: s.runs}
	for _, f := range s.cfg.tickers {
		f.FollowTick(ctx, t)
	}
}
