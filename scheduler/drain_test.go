package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// demoRun is the README's demo on a fake clock: the demo desk and the
// example rules. Its client has the default request budget (60 a minute,
// a fifth kept for people), the limiter on the same clock, so that
// waiting for the budget takes fake time (budgetClient).
type demoRun struct {
	t      *testing.T
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	yaml   string // the example rules
	set    *rules.Set
	start  time.Time
}

func newDemoRun(t *testing.T) *demoRun {
	y, err := os.ReadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d := &demoRun{t: t, clk: clockwork.NewFakeClockAt(friday), yaml: string(y), set: mustRules(t, string(y)), start: friday}
	d.sim = sdsim.NewServer(sdsim.WithClock(d.clk.Now), sdsim.WithGenerated(demoSeed, demoTickets))
	t.Cleanup(d.sim.Close)
	d.client = d.budgetClient()
	return d
}

// budgetClient is a client of the demo desk at the default budget, its
// limiter on the fake clock.
func (d *demoRun) budgetClient() *sdclient.Client {
	c, err := sdclient.New(d.sim.URL, sdsim.DefaultAPIKey, sdclient.WithClock(d.clk))
	if err != nil {
		d.t.Fatal(err)
	}
	return c
}

// scheduler is a scheduler over the demo at the client's budget with
// opts, on a fresh store.
func (d *demoRun) scheduler(opts ...Option) (*Scheduler, *store.Store) {
	st := openStore(d.t, filepath.Join(d.t.TempDir(), "state.db"))
	base := []Option{WithBudget(d.client.BackgroundBudget()), WithListBudget(d.client.BackgroundListBudget())}
	return d.schedulerOn(d.set, st, groupNotifier{&recNotifier{}}, append(base, opts...)...), st
}

// schedulerOn is a scheduler of set over the demo desk on st, on the fake
// clock, with its escalator, its jobs built.
func (d *demoRun) schedulerOn(set *rules.Set, st *store.Store, n firing.Notifier, opts ...Option) *Scheduler {
	esc, err := oncall.NewEscalator(set.OnCall(), st, &recPager{}, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	base := []Option{WithClock(d.clk), WithSingleton(false), WithEscalator(esc, 0)}
	s, err := New(testLogger(d.t), firing.ClientDesk(d.client), set, st, n, append(base, opts...)...)
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := s.currentJobs(d.t.Context()); err != nil {
		d.t.Fatal(err)
	}
	return s
}

// drive runs fn while moving the fake clock on whenever something waits on
// it (the limiter waiting for budget), a second at a time.
func (d *demoRun) drive(fn func()) {
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	for {
		select {
		case <-done:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(d.t.Context(), 2*time.Millisecond)
		if d.clk.BlockUntilContext(ctx, 1) == nil {
			d.clk.Advance(time.Second)
		}
		cancel()
	}
}

// run ticks s's cycle every minute from the start, as gocron does (a tick
// that comes while a cycle runs is skipped), for the given fake time.
func (d *demoRun) run(s *Scheduler, dur time.Duration) {
	end := d.start.Add(dur)
	for next := d.start; next.Before(end); {
		if now := d.clk.Now(); now.Before(next) {
			d.clk.Advance(next.Sub(now))
		}
		d.drive(func() {
			s.runCycle(d.t.Context(), scheduled)
			s.inflight.Wait()
		})
		for !next.After(d.clk.Now()) {
			next = next.Add(time.Minute)
		}
	}
}

// replies counts the public replies on the desk that contain text, by
// ticket.
func (d *demoRun) replies(text string) map[int64]int {
	out := map[int64]int{}
	for _, id := range d.sim.Desk.TicketIDs() {
		for _, c := range d.sim.Desk.Conversations(id) {
			if !c.Private && !c.Incoming && strings.Contains(c.Body, text) {
				out[id]++
			}
		}
	}
	return out
}

// TestPlanDrainMatchesTheDemo is issue 22's honest plan: what `rules plan`
// says of the demo (the example rules on the demo desk, at the default
// budget) holds in a real run: its drain time is within 25% of when the
// last firing of a capped rule reached the desk, and a rule whose first
// run is later fires nothing before it.
func TestPlanDrainMatchesTheDemo(t *testing.T) {
	d := newDemoRun(t)

	// The plan, as `deskbot rules plan` makes it: a dry run of every rule
	// through a client of its own.
	var o *plan.Outlook
	planner, err := New(testLogger(t), firing.ClientDesk(d.budgetClient()), d.set, firing.ReadOnlyLedger(nil), firing.LogNotifier{Logger: testLogger(t)},
		WithClock(d.clk), WithDryRun(true), WithEscalator(lazyEscalator{new(*oncall.Escalator)}, 0), WithOutlook(func(x plan.Outlook) { o = &x }))
	if err != nil {
		t.Fatal(err)
	}
	c, err := planner.RunCycle(t.Context())
	if err != nil || o == nil {
		t.Fatalf("plan: %v, outlook %v", err, o)
	}
	drain := o.PlanDrain(d.client.BackgroundBudget(), 1, c.Sync.FullSyncRequests)
	capped := 0
	for _, ro := range o.Rules {
		if len(ro.Waves) > 1 {
			capped++
		}
		if ro.Rule.Name == "pending-reminder" && !ro.Next.Equal(monday) {
			t.Errorf("plan: pending-reminder first runs at %v, want Monday 09:00", ro.Next)
		}
	}
	if capped == 0 {
		t.Fatal("plan: no rule is capped on the demo: the test shows nothing")
	}

	// The real run: a scheduler ticking every minute for 15 minutes. A
	// firing's time is when the ledger recorded it finished.
	s, st := d.scheduler()
	d.run(s, 15*time.Minute)
	var last time.Time
	for _, ro := range o.Rules {
		if len(ro.Waves) <= 1 {
			continue
		}
		var at time.Time
		for _, f := range ro.Fires {
			rec, ok, err := st.FiringState(t.Context(), rules.FiringKey{Rule: f.Rule, TicketID: f.TicketID})
			if err != nil || !ok || rec.State != rules.FiringDone {
				t.Fatalf("%s on #%d: %+v, %v; want fired within 15 minutes", f.Rule, f.TicketID, rec, err)
			}
			at = plan.Later(at, rec.FiredAt)
		}
		t.Logf("%s: %d firings, the last %v after start; the plan says %v", ro.Rule.Name, len(ro.Fires), at.Sub(d.start), drain.Rules[ro.Rule.Name])
		last = plan.Later(last, at)
	}
	real := last.Sub(d.start)
	t.Logf("plan: the backlog drains in %v (%d cycles, every %v, %d requests); real: the last capped firing %v after start",
		drain.Last, drain.Cycles, drain.Every, drain.Requests, real)
	if diff := drain.Last - real; real <= 0 || diff.Abs() > real/4 {
		t.Errorf("the plan's drain time %v is not within 25%% of the real %v", drain.Last, real)
	}
	if n := len(d.replies(reminderText)); n != 0 {
		t.Errorf("%d tickets got public replies in the first 15 minutes of a Friday: pending-reminder runs on Monday", n)
	}
}
