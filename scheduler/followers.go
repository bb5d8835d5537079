package scheduler

import (
	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
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
func WithDMs(d firing.DMSender) Option { return func(cfg *config) { cfg.run.DMs = d } }

// TickFollower follows the scheduler's ticks on the leader, beside the
// rules, over the mirror as the tick's sync left it (digests); the cycle
// runs them after its sync.
type TickFollower = cycle.TickFollower

// Tick is what a TickFollower is given at each tick.
type Tick = cycle.Tick

// WithTickFollower has f follow the scheduler's ticks (digests).
func WithTickFollower(f TickFollower) Option {
	return func(cfg *config) {
		if f != nil {
			cfg.tickers = append(cfg.tickers, f)
		}
	}
}
