package plan

import (
	"cmp"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// Drain is how the firings of a plan that run now drain under the caps
// and the request budget (Outlook.Drain).
type Drain struct {
	Cycles   int           // cycles that start firings
	Requests int           // the requests of those cycles: firings, feed, first sync
	Last     time.Duration // from the first cycle's start until the last firing's last request
	// Every is the average time from one of those cycles to the next:
	// the tick, stretched by waits for the budget and by the planner.
	Every time.Duration
	// Rules is, per rule, when its last firing's requests have gone out.
	Rules map[string]time.Duration
}

// drainHistory is how many recent cycles the simulated planner averages
// (the planner's historyLen).
const drainHistory = PlannerHistory

// PlannerHistory is how many recent cycles of a job the scheduler's
// budget planner averages.
const PlannerHistory = 5

// cycleCosts are the requests of the firings in each cycle the outlook
// drains in, and the last cycle of each rule.
func (o Outlook) cycleCosts() (perCycle []int, lastCycle map[string]int) {
	lastCycle = map[string]int{}
	for _, ro := range o.Rules {
		if ro.Next.After(o.At) {
			continue
		}
		cost := FiringRequests(ro.Rule)
		for i, n := range ro.Waves {
			for len(perCycle) <= i {
				perCycle = append(perCycle, 0)
			}
			perCycle[i] += n * cost
			if n > 0 {
				lastCycle[ro.Rule.Name] = i
			}
		}
	}
	return perCycle, lastCycle
}

// drainStretch is the planner's stretch after cycles that spent history
// requests (1 without a budget).
func drainStretch(history []int, tick time.Duration, budget int) float64 {
	if budget <= 0 {
		return 1
	}
	sum := 0
	for _, h := range history {
		sum += h
	}
	rpm := float64(sum) / float64(len(history)) * float64(time.Minute) / float64(tick)
	return max(1, rpm/float64(budget))
}

// nextDrainTick is the next tick after a cycle that started at start and
// sent its last request at end: after the cycle ended (ticks while it
// runs are skipped), and not before the planner's stretched interval.
func nextDrainTick(start, end, tick time.Duration, stretch float64) time.Duration {
	next := start + tick
	for next <= end && end > start {
		next += tick
	}
	for next < start+time.Duration(float64(tick)*stretch)-min(tick/100, time.Second) {
		next += tick
	}
	return next
}

// PlanDrain is Drain for a plan's cycle (a dry run of every rule,
// `deskbot rules plan`) polling workspaces: a change feed request per
// workspace a cycle, and in the first cycle the read of the open statuses
// and the fullSync requests the plan's cycle made.
func (o Outlook) PlanDrain(budget, workspaces, fullSync int) Drain {
	return o.Drain(budget, max(1, workspaces), 1+fullSync)
}

// Drain simulates how the firings that run now (not the rules whose first
// run is later) drain. It depends on totals only, not on the order in
// which a cycle admits its firings: each cycle starts the firings its caps
// admit (Waves), each costing FiringRequests; a cycle also sends feed
// requests (the change feed) and the first one first more (the sync and
// the statuses). Requests go out at most budget per sliding minute (a
// fresh window's at once), as the client's limiter grants them; a cycle
// lasts until its last request goes out, and the next starts at the first
// tick after it ends and after the planner's stretch (recent cycles'
// requests a minute over the budget). budget 0: no budget.
func (o Outlook) Drain(budget, feed, first int) Drain {
	tick := cmp.Or(o.Tick, rules.DefaultEvery)
	perCycle, lastCycle := o.cycleCosts()
	out := Drain{Cycles: len(perCycle), Rules: map[string]time.Duration{}}
	if len(perCycle) == 0 {
		return out
	}
	var (
		grants  []time.Duration // when each request went out, in order
		ends    []time.Duration // when each cycle's last request went out
		history []int
		start   time.Duration
	)
	for i, n := range perCycle {
		n += feed
		if i == 0 {
			n += first
		}
		end := start
		for range n {
			g := start
			if budget > 0 && len(grants) >= budget {
				g = max(g, grants[len(grants)-budget]+time.Minute)
			}
			grants = append(grants, g)
			end = g
		}
		out.Requests += n
		ends = append(ends, end)
		history = append(history, n)
		if len(history) > drainHistory {
			history = history[1:]
		}
		if i == len(perCycle)-1 {
			break
		}
		start = nextDrainTick(start, end, tick, drainStretch(history, tick, budget))
	}
	out.Last = ends[len(ends)-1]
	if out.Cycles > 1 {
		out.Every = start / time.Duration(out.Cycles-1)
	}
	for name, i := range lastCycle {
		out.Rules[name] = ends[i]
	}
	return out
}
