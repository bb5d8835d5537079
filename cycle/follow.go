package cycle

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

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

// followTick runs the tick followers at c's time over the mirror's tickets.
func (r *Runner) followTick(ctx context.Context, c run, tickets []*sdclient.Ticket) {
	t := Tick{Now: c.Now, Set: c.Set, Tickets: tickets, People: &r.people, Runs: r.d.Runs}
	for _, f := range r.d.Tickers {
		f.FollowTick(ctx, t)
	}
}

// TicksDue reports whether a tick follower has work at now.
func (r *Runner) TicksDue(set *rules.Set, now time.Time) bool {
	for _, f := range r.d.Tickers {
		if f.Due(set, now) {
			return true
		}
	}
	return false
}
