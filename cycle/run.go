package cycle

import (
	"context"
	"log/slog"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// In is what one cycle runs: when, which rules, at what pace.
type In struct {
	Now  time.Time
	Set  *rules.Set
	Jobs []Job // the jobs due, each reported apart
	// Once: RunCycle. Wait for a full sync the mirror needs; a dry run
	// shows each rule at its next run (deskbot rules plan).
	Once bool
	Tick time.Duration // the cycle's interval
	// Fits reports whether firings costing cost desk requests may start
	// now (the queue's pace).
	Fits func(cost int) bool
	// Count is told every desk request the cycle sends, as it is sent
	// (the scheduler's budget).
	Count func(*sdclient.Response, error)
	Log   *slog.Logger
}

// Job is rules sharing a query and a schedule, reported together.
type Job struct {
	Name  string
	Rules []*rules.Rule
}

// Out is what one cycle did: its sync and, per due job, its rules.
type Out struct {
	// Skipped says why nothing ran: stopping (a stop cut the evaluation
	// short: nothing was executed, reconciled or recorded); the scheduler
	// adds stretched, running, idle, not the leader.
	Skipped string
	Sync    *feed.Synced // the cycle's sync, shared by its jobs
	Jobs    []Result     // per job of In.Jobs, in order
	// Requests is every desk request of the cycle (sync, re-reads,
	// actions); Executed those of the execute step (the queue's pace
	// bounds them, not the planner).
	Requests, Executed int
	Tickets            int // mirrored tickets the rules ran on
	Decisions          int
}

// run is one cycle as its steps see it: firing.Cycle, the desk whose
// waits for the rate budget end with the cycle's ctx, and the meter of
// the cycle's desk requests (the one thing the steps add to).
type run struct {
	firing.Cycle
	desk firing.Desk
	in   *In
	n    *int
}

// count adds the requests behind one desk call and tells in.Count.
func (c run) count(resp *sdclient.Response, err error) {
	*c.n += feed.Attempts(resp, err)
	if c.in.Count != nil {
		c.in.Count(resp, err)
	}
}

// persistTimeout bounds the save of a cycle's re-read tickets to the mirror.
const persistTimeout = 10 * time.Second

// Run runs one cycle: the steps in order, each passing its result to the
// next (sync → follow the tick → people → plan → execute or dry run →
// reconcile → end).
func (r *Runner) Run(ctx context.Context, in In) Out {
	c := run{Cycle: firing.Cycle{Set: in.Set, Rules: dueRules(in.Set, in.Jobs), Now: in.Now, Log: in.Log},
		// The cycle's writes run on contexts of their own (actionContext); a
		// stop still ends their waits for the rate budget.
		desk: r.d.Desk.Stopping(ctx), in: &in, n: new(int)}
	synced, tickets := r.sync(ctx, c)
	r.followTick(ctx, c, tickets) // digests
	r.people.Lookup(ctx, r.d.Desk, c.count, in.Set, tickets, in.Now, in.Log)
	p, err := r.plan(ctx, c, tickets)
	if err != nil {
		// Stopping: nothing half-evaluated reconciles or acts.
		in.Log.Info("cycle stopped while evaluating the rules", slog.Any("error", err))
		return stopped(in.Jobs, synced, err)
	}
	var done outcomes
	if r.d.DryRun {
		done = r.dryRun(ctx, c, p.Ordered) // says what it would have done, executes nothing
	} else {
		done = r.execute(ctx, c, p)
	}
	jobs := r.reconcile(ctx, c, p, synced, tickets, done)
	r.end(ctx, c, jobs, p, done)
	return Out{Sync: synced, Jobs: jobs, Requests: *c.n, Executed: done.requests, Tickets: len(tickets), Decisions: len(p.Decisions)}
}

// dueRules are the rules of the jobs, in file order.
func dueRules(set *rules.Set, jobs []Job) []*rules.Rule {
	inDue := map[string]bool{}
	for _, j := range jobs {
		for _, r := range j.Rules {
			inDue[r.Name] = true
		}
	}
	var due []*rules.Rule
	for _, r := range set.Rules() {
		if inDue[r.Name] {
			due = append(due, r)
		}
	}
	return due
}

// sync is the sync step: it syncs the mirror and returns the sync's
// result and the mirror's tickets.
func (r *Runner) sync(ctx context.Context, c run) (*feed.Synced, []*sdclient.Ticket) {
	opts := []feed.SyncOption{feed.Count(c.count)}
	if c.in.Once {
		opts = append(opts, feed.Inline())
	}
	synced := r.d.Feed.Sync(ctx, opts...) // the feed then tells its subscribers what changed
	if synced.Err != nil {
		c.Log.Log(ctx, feed.IncompleteLevel(synced.Err), "mirror sync incomplete: rules run on the mirror as it is, no episode ends", slog.Any("error", synced.Err))
	}
	return synced, r.d.Feed.Snapshot()
}

// plan evaluates the due rules on the tickets (pure), notes the results
// for /readyz and the status pages, reads the ledger's view of the
// decisions and plans the cycle (pure: plan.Make). It returns ctx's error
// when a stop cut the evaluation short.
func (r *Runner) plan(ctx context.Context, c run, tickets []*sdclient.Ticket) (*plan.Plan, error) {
	decisions, err := plan.Evaluate(ctx, c.Set, c.Rules, tickets, c.Now)
	if err != nil {
		return nil, err
	}
	r.budgets.Note(c.Rules, decisions, c.Now, r.d.Metrics.OverBudget, c.Log)
	r.matches.Note(c.Rules, decisions, c.Now) // for the status pages (Memories)

	var led plan.LedgerView // a dry run reads the ledger itself (dryRun)
	if !r.d.DryRun {
		led = firing.ReadView(ctx, r.d.Ledger, c.Set, decisions, c.Log)
	}
	_, groups := r.d.Notifier.(firing.GroupNotifier)
	p := plan.Make(plan.Input{Set: c.Set, Now: c.Now, Decisions: decisions, Ledger: led,
		Since: r.waiting.Since(decisions, led.Begun), DryRun: r.d.DryRun, CycleCap: r.d.CycleCap, Groups: groups})
	r.notePlan(c, p)
	return p, nil
}

// stopped is the result of a cycle stopped while evaluating.
func stopped(jobs []Job, synced *feed.Synced, err error) Out {
	out := Out{Sync: synced, Skipped: "stopping"}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, Result{Job: j.Name, Rules: names(j.Rules), Err: err, Skipped: "stopping", Sync: synced})
	}
	return out
}

// end saves what the cycle re-read to the mirror, remembers what it held
// back (for the explainer and the queue's age order) and adds to each
// job's result what it fired and held back, and the cycle's requests.
func (r *Runner) end(ctx context.Context, c run, jobs []Result, p *plan.Plan, done outcomes) {
	// A local write, finished even when a stop (SIGTERM, Ctrl-C) cancelled
	// the cycle: what it re-read is kept, and a stop logs no warning.
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	perr := r.d.Feed.Persist(pctx)
	pcancel()
	if perr != nil {
		c.Log.Warn("save the tickets re-read in this cycle to the mirror", slog.Any("error", perr))
	}
	held := plan.MergeHeld(p.Held, done.Held)
	if !r.d.DryRun {
		r.held.Note(c.Rules, held)
		byClass := r.waiting.Note(c.Set, c.Rules, held, c.Now)
		for cl := plan.ClassPage; cl <= plan.ClassDigest; cl++ {
			r.d.Metrics.Queued.WithLabelValues(cl.String()).Set(float64(byClass[cl]))
		}
	}
	for i, j := range c.in.Jobs {
		for _, rule := range j.Rules {
			jobs[i].Fired += done.FiredBy[rule.Name]
			jobs[i].HeldBack += len(held[rule.Name])
		}
		jobs[i].Requests = *c.n
	}
}

func names(rs []*rules.Rule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}
