package bot

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
)

// Command admission: how a burst of commands is bounded (issue 16, 10).
//
// Every envelope that makes desk work (a slash command, a button, a
// new-ticket form) passes the gate once it is acked and known not to be a
// redelivery. The gate decides at once whether the command can be answered
// in time; the commands it admits run on at most W workers, in arrival
// order, and every other one gets an honest answer straight away:
//
//	busy: 17 commands ahead of you, try again in about 6 s
//	busy: 19 commands ahead of you used this minute's desk budget (60 requests a minute), try again in about 58 s
//
// The numbers that size it:
//
//	R  the desk budget of people's commands, in credits a minute
//	   (WithDeskBudget: DESKBOT_DESK_RATE_PER_MIN, 60 by default; the
//	   client's Interactive twin may spend all of it, reserve included).
//	c  what a command costs, estimated: 3 credits, a ticket read with its
//	   conversations and requester (/ticket show, a button's card); most
//	   other commands cost 1 or 2. Capped at R.
//	H  the answer horizon: 4 s. A command should be answered within it
//	   (Slack users expect an answer within a few seconds; 1 s is left for
//	   Slack's own round trips).
//	S  how long a command takes, start to answer: a moving average of the
//	   commands run (first guess 1 s).
//
//	W  workers = clamp(ceil(R / c), 2, 64). The desk counts a sliding
//	   window, so an idle budget can be spent all at once: within a few
//	   seconds it serves at most R/c commands, and more workers would only
//	   wait inside the desk client's limiter, holding connections (open
//	   files) and answering after the budget rolls, a minute later. 20 at
//	   the default budget; the cap bounds connections at large budgets.
//	Q  queue = W: one more round, started as workers free up. A command is
//	   queued only while its expected answer, (queued/W + 2) * S, fits H
//	   (at S = 2 s that is one round); one that has not started H after
//	   it came is answered busy then.
//	$  the budget check: a command is admitted only while
//	   spent + outstanding + c <= R, where spent is what the router's desk
//	   calls spent in the last minute (metered, budget.go) and outstanding
//	   what admitted commands have yet to spend (c each, less what they
//	   spent so far). Without it, commands beyond the budget would wait a
//	   minute for it and fail. The meter sees only this process's commands:
//	   background polling shares the desk client's budget, but sdclient
//	   serves interactive requests first and keeps a fifth of the budget
//	   for them, so an estimate that is off costs a late answer, not a lost
//	   one (the router's command timeout still bounds it).
//
// With R = 60 (W = 20), 1,000 `/ticket show` at a desk answering in 2 s
// (BenchmarkSlashBurst): 19 are answered with the card in about 4 s (the
// budget pays for 19: 3 credits each, plus the agent lookup and the
// statuses), 981 with "busy ... try again in about 60 s" within 0.1 s.
//
// Commands that cannot reach the desk (help, a usage error) skip the gate.
// Outgoing Slack calls are bounded and retried on their own (slackhttp.go).
type gate struct {
	now      func() time.Time
	meter    *deskMeter // nil: budget unchecked
	budget   int        // R; 0: unchecked
	cost     int        // c
	workers  int        // W
	queueCap int        // Q
	horizon  time.Duration

	mu       sync.Mutex
	svc      time.Duration // S
	running  int
	queue    []*Admission            // admitted, waiting for a worker, FIFO
	live     map[*Admission]struct{} // admitted and not finished: running or queued
	admitted []time.Time             // admission times within the last minute
}

const (
	defaultDeskBudget = 60
	commandCost       = creditsFullTicket
	answerHorizon     = 4 * time.Second
	firstServiceGuess = time.Second
	minWorkers        = 2
	maxWorkers        = 64
)

// workersFor is W for a budget of r credits a minute (0: the default).
func workersFor(r int) int {
	if r <= 0 {
		r = defaultDeskBudget
	}
	c := min(commandCost, r)
	return min(max((r+c-1)/c, minWorkers), maxWorkers)
}

func newGate(budget int, meter *deskMeter, now func() time.Time) *gate {
	w := workersFor(budget)
	g := &gate{
		now: now, budget: budget, cost: min(commandCost, max(budget, 1)),
		workers: w, queueCap: w, horizon: answerHorizon,
		svc: firstServiceGuess, live: map[*Admission]struct{}{},
	}
	if budget > 0 {
		g.meter = meter
	}
	return g
}

// Admission is one command admitted by the router (Router.Admit): it runs
// once Wait says so, charges its desk calls to itself through Charge, and
// frees its place with Done.
type Admission struct {
	g        *gate
	acct     account
	start    chan struct{} // closed when it may run
	came     time.Time
	began    time.Time
	running  bool
	finished bool
}

// enter admits a command or says, at once, why not and when to try again.
func (g *gate) enter() (*Admission, string) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pruneLocked(now)
	ahead := g.running + len(g.queue)
	if g.meter != nil {
		if over := g.meter.used(now) + g.outstandingLocked() + g.cost - g.budget; over > 0 {
			wait, ok := g.meter.freed(now, over)
			if !ok {
				// Admitted commands hold the budget: once they spent it,
				// it leaves the window a minute later.
				wait = budgetWindow
			}
			wait = max(wait, g.drainLocked(ahead))
			return nil, budgetBusyText(len(g.admitted), g.budget, wait)
		}
	}
	p := &Admission{g: g, start: make(chan struct{}), came: now}
	switch {
	case g.running < g.workers:
		g.running++
		p.running, p.began = true, now
		close(p.start)
	case len(g.queue) < g.queueCap && time.Duration(len(g.queue)/g.workers+2)*g.svc <= g.horizon:
		g.queue = append(g.queue, p)
	default:
		return nil, busyText(ahead, g.drainLocked(ahead-g.workers+1))
	}
	g.live[p] = struct{}{}
	g.admitted = append(g.admitted, now)
	return p, ""
}

// Wait blocks until the command may run; false (with the busy answer)
// when it did not start within the horizon.
func (p *Admission) Wait() (bool, string) {
	g := p.g
	t := time.NewTimer(g.horizon)
	defer t.Stop()
	select {
	case <-p.start:
		return true, ""
	case <-t.C:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.running {
		return true, ""
	}
	i := slices.Index(g.queue, p)
	if i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
	}
	p.finished = true
	delete(g.live, p)
	ahead := g.running + i
	return false, busyText(ahead, g.drainLocked(ahead-g.workers+1))
}

// Done frees the worker (or the queue place) and starts the next command.
func (p *Admission) Done() {
	g := p.g
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	delete(g.live, p)
	if !p.running {
		if i := slices.Index(g.queue, p); i >= 0 {
			g.queue = slices.Delete(g.queue, i, i+1)
		}
		return
	}
	// A moving average over about the last five commands.
	g.svc += (now.Sub(p.began) - g.svc) / 5
	g.running--
	if len(g.queue) > 0 {
		next := g.queue[0]
		g.queue = g.queue[1:]
		g.running++
		next.running, next.began = true, now
		close(next.start)
	}
}

func (g *gate) outstandingLocked() int {
	n := 0
	for p := range g.live {
		n += max(0, g.cost-int(p.acct.credits.Load()))
	}
	return n
}

// drainLocked is how long the workers take to get through n commands.
func (g *gate) drainLocked(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(float64(n)/float64(g.workers))) * g.svc
}

func (g *gate) pruneLocked(now time.Time) {
	cut := now.Add(-budgetWindow)
	i := 0
	for i < len(g.admitted) && !g.admitted[i].After(cut) {
		i++
	}
	g.admitted = g.admitted[i:]
}

// seconds rounds a wait up to whole seconds, at least one.
func wholeSeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func nCommands(n int) string {
	if n == 1 {
		return "1 command"
	}
	return fmt.Sprintf("%d commands", n)
}

// busyText answers a command the workers cannot reach in time.
func busyText(ahead int, wait time.Duration) string {
	return fmt.Sprintf("busy: %s ahead of you, try again in about %d s", nCommands(ahead), wholeSeconds(wait))
}

// budgetBusyText answers a command the desk budget cannot pay for now.
func budgetBusyText(ahead, budget int, wait time.Duration) string {
	if ahead == 0 {
		return fmt.Sprintf("busy: this minute's desk budget (%d requests a minute) is spent, try again in about %d s", budget, wholeSeconds(wait))
	}
	return fmt.Sprintf("busy: %s ahead of you used this minute's desk budget (%d requests a minute), try again in about %d s", nCommands(ahead), budget, wholeSeconds(wait))
}

// Charge returns ctx carrying the admission, so that the desk calls the
// command makes under it are counted against its estimate.
func (p *Admission) Charge(ctx context.Context) context.Context {
	return withAccount(ctx, &p.acct)
}

// Admit admits one command that will call the desk, or says at once, in
// words for the caller, why not and when to try again: the commands
// admitted run on a bounded set of workers within the router's desk budget
// (WithDeskBudget). The transport runs the command once Wait returns true
// and calls Done when it is answered.
func (r *Router) Admit() (chat.Admission, string) {
	p, busy := r.gate.enter()
	if p == nil {
		return nil, busy
	}
	return p, ""
}

// NeedsDesk reports whether cmd may call the desk, and so must be admitted
// first (Admit): help and a command line that does not parse are answered
// without it, and never busy.
func (r *Router) NeedsDesk(cmd chat.Command) bool {
	if cmd.Slash == "" {
		return true // a button or a form
	}
	p, err := parseWith(r.table, cmd.Slash, cmd.Text)
	return err == nil && p.Name != "ticket help"
}
