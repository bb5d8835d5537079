package scheduler

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/cycle"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// friday is when the example's deskbot first starts: Friday 2026-11-27
// 11:07 UTC (the example's cron is on UTC), as in issue 22.
var friday = time.Date(2026, 11, 27, 11, 7, 0, 0, time.UTC)

// monday is the first time of pending-reminder (cron "0 9 * * 1-5") after
// friday.
var monday = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// reminderText is what pending-reminder's public reply says.
const reminderText = "we are still waiting for your answer"

// exampleDesk is the demo (demoRun) and the state store its deskbot
// processes share.
type exampleDesk struct {
	*demoRun
	path string // the SQLite state store
	// late is a pending ticket last updated Friday 09:10: it needs a
	// reminder from Monday 09:10 on, after the 09:00 run.
	late int64
	// notifier is the chat of every process (nil: alerts recorded apart).
	notifier firing.Notifier
}

func newExampleDesk(t *testing.T) *exampleDesk {
	d := &exampleDesk{demoRun: newDemoRun(t), path: filepath.Join(t.TempDir(), "state.db")}
	d.client = testkit.DeskClient(t, d.sim) // no budget: the processes do not drive the clock
	at := time.Date(2026, 11, 27, 9, 10, 0, 0, time.UTC)
	d.late = d.sim.Desk.AddTicket(sdsim.Ticket{Subject: "waiting since Friday morning", Status: sdclient.StatusPending, CreatedAt: at, UpdatedAt: at}).ID
	return d
}

// process is one deskbot process: its own store connection and scheduler.
type process struct {
	d    *exampleDesk
	s    *Scheduler
	runs int // cycles in which pending-reminder ran
}

// start starts a deskbot process on the shared store (a restart, or a
// second replica).
func (d *exampleDesk) start() *process {
	var n firing.Notifier = groupNotifier{&recNotifier{}}
	if d.notifier != nil {
		n = d.notifier
	}
	return &process{d: d, s: d.schedulerOn(mustRules(d.t, d.yaml), openStore(d.t, d.path), n)}
}

// cycle runs the process's scheduled cycle at the clock's time, and what a
// first full sync kicks.
func (p *process) cycle() {
	c := p.s.runCycle(p.d.t.Context(), scheduled)
	p.s.inflight.Wait()
	for _, j := range c.Jobs {
		if j.Job == "pending-reminder" {
			p.runs++
		}
	}
}

// until runs cycles every step from the clock's time until before end,
// then sets the clock to end.
func (p *process) until(end time.Time, step time.Duration) {
	for p.d.clk.Now().Before(end) {
		p.cycle()
		p.d.clk.Advance(min(step, end.Sub(p.d.clk.Now())))
	}
}

// waiting are the pending tickets of the polled (default) workspace
// untouched for more than 72 hours at now: what the example's
// pending-reminder is for.
func (d *exampleDesk) waiting(now time.Time) map[int64]bool {
	out := map[int64]bool{}
	for _, id := range d.sim.Desk.TicketIDs() {
		tk, _ := d.sim.Desk.Ticket(id)
		if tk.WorkspaceID == sdsim.DefaultWorkspaceID && tk.Status == sdclient.StatusPending && now.Sub(tk.UpdatedAt) > 72*time.Hour {
			out[id] = true
		}
	}
	return out
}

// checkReplies fails unless exactly the tickets of want got one reminder
// each.
func (d *exampleDesk) checkReplies(what string, want map[int64]bool) {
	d.t.Helper()
	got := d.replies(reminderText)
	for id, n := range got {
		if !want[id] || n != 1 {
			d.t.Errorf("%s: ticket #%d has %d reminders, want %d", what, id, n, map[bool]int{true: 1}[want[id]])
		}
	}
	for id := range want {
		if got[id] == 0 {
			d.t.Errorf("%s: ticket #%d waiting on its requester got no reminder", what, id)
		}
	}
}

// weekend runs a first deskbot from Friday 11:07 to Monday 08:50, with a
// restart on Saturday and a reload on Sunday: pending-reminder sends
// nothing and never runs, although tickets wait for it all along.
func (d *exampleDesk) weekend() {
	t := d.t
	if len(d.waiting(friday)) == 0 {
		t.Fatal("the demo desk has no ticket waiting for a reminder: the test shows nothing")
	}
	a := d.start()
	a.until(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), 30*time.Minute)
	b := d.start() // restart on Saturday
	b.until(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), 30*time.Minute)
	if err := b.s.Reload(mustRules(t, d.yaml)); err != nil { // SIGHUP on Sunday
		t.Fatal(err)
	}
	b.until(monday.Add(-10*time.Minute), 30*time.Minute)
	b.cycle()
	if n := len(d.replies(reminderText)); n != 0 || a.runs+b.runs != 0 {
		t.Fatalf("before Monday 09:00: %d tickets got reminders, pending-reminder ran %d times; want none", n, a.runs+b.runs)
	}
}

// TestExampleReminderRunsAtItsTime is issue 22's done-means: the example
// rules on the demo desk from Friday 11:07. pending-reminder sends nothing
// until Monday 09:00 (restarts and reloads included); a restart at 09:20
// still sends that day's reminders, once; a restart at 15:00 sends none
// (the next are Tuesday's); a leader change sends nothing twice. Replies
// are counted on the desk, through the real client against sdsim.
func TestExampleReminderRunsAtItsTime(t *testing.T) {
	t.Run("RestartAt0920CatchesUpOnce", func(t *testing.T) {
		d := newExampleDesk(t)
		d.weekend() // the process stops at 08:50
		d.clk.Advance(monday.Add(20 * time.Minute).Sub(d.clk.Now()))
		b := d.start()
		want := d.waiting(d.clk.Now())
		if !want[d.late] {
			t.Fatal("the late ticket does not wait for a reminder at 09:20")
		}
		b.until(monday.Add(40*time.Minute), 5*time.Minute)
		c := d.start() // and again at 09:40
		c.until(monday.Add(6*time.Hour), 20*time.Minute)
		c.cycle()
		d.checkReplies("restart at 09:20, run until 15:00", want)
		if b.runs != 1 || c.runs != 0 {
			t.Errorf("pending-reminder ran %d times in the 09:20 process and %d in the 09:40 one, want once and never", b.runs, c.runs)
		}
		t.Logf("restart at 09:20: %d reminders sent once each (the 09:00 run, caught up); none on the 09:40 restart", len(want))
	})

	t.Run("RestartAt1500SkipsTheDay", func(t *testing.T) {
		d := newExampleDesk(t)
		d.weekend()
		d.clk.Advance(monday.Add(6 * time.Hour).Sub(d.clk.Now()))
		b := d.start()
		b.until(monday.Add(24*time.Hour), time.Hour)
		if n := len(d.replies(reminderText)); n != 0 || b.runs != 0 {
			t.Fatalf("restart at 15:00: %d tickets got reminders by Tuesday 09:00, pending-reminder ran %d times; want none", n, b.runs)
		}
		want := d.waiting(d.clk.Now())
		b.cycle() // Tuesday 09:00
		d.checkReplies("Tuesday 09:00", want)
		t.Logf("restart at 15:00: no reminder on Monday; Tuesday 09:00 sent %d", len(want))
	})

	t.Run("LeaderChangeSendsNothingTwice", func(t *testing.T) {
		d := newExampleDesk(t)
		d.weekend()
		a, b := d.start(), d.start() // two replicas; a leads first
		a.until(monday, 5*time.Minute)
		want := d.waiting(monday)
		if want[d.late] {
			t.Fatal("the late ticket already waits for a reminder at 09:00")
		}
		a.cycle() // Monday 09:00
		d.checkReplies("Monday 09:00", want)
		d.clk.Advance(time.Minute)
		a.until(monday.Add(5*time.Minute), time.Minute)
		b.until(monday.Add(30*time.Minute), time.Minute) // b takes over; the late ticket matures at 09:10
		a.until(monday.Add(6*time.Hour), 30*time.Minute) // and a again
		a.cycle()
		d.checkReplies("after two leader changes, at 15:00", want)
		if a.runs != 1 || b.runs != 0 {
			t.Errorf("pending-reminder ran %d times on the first leader and %d on the second, want once and never", a.runs, b.runs)
		}
		t.Logf("leader changes at 09:05 and 09:30: %d reminders, each once; the late ticket waits for Tuesday", len(want))
	})
}

// A run that sees an incomplete mirror does not count as the run of its
// time. Here the rule has been scheduled since Friday, but the mirror is
// empty at 09:00 (a new state store, say): the 09:00 run sees a mirror
// still being built (its first full sync runs in the background); the
// cycle kicked when the sync finishes runs the rule on the whole mirror,
// once, and the next ticks do not run it again.
func TestCronRunOnIncompleteMirrorRunsAgain(t *testing.T) {
	d := newExampleDesk(t)
	set := mustRules(t, d.yaml)
	if err := openStore(t, d.path).SetRuleRuns(t.Context(), store.RuleRun{Rule: "pending-reminder",
		Schedule: plan.ScheduleKey(set.Rule("pending-reminder")), Since: friday}); err != nil {
		t.Fatal(err)
	}
	d.clk.Advance(monday.Sub(d.clk.Now()))
	want := d.waiting(monday)
	if len(want) == 0 {
		t.Fatal("no ticket waits for a reminder on Monday 09:00")
	}
	p := d.start()
	c := p.s.runCycle(t.Context(), scheduled)
	if c.Sync == nil || c.Sync.Complete {
		t.Fatalf("the first cycle's sync: %+v, want it incomplete (the first full sync runs in the background)", c.Sync)
	}
	if !slices.ContainsFunc(c.Jobs, func(r cycle.Result) bool { return r.Job == "pending-reminder" }) {
		t.Fatalf("the 09:00 cycle ran %+v, want pending-reminder among them", c.Jobs)
	}
	if n := len(d.replies(reminderText)); n != 0 {
		t.Fatalf("%d reminders from a run on an empty mirror", n)
	}
	p.s.inflight.Wait() // the full sync, and the cycle it kicks
	d.checkReplies("after the first full sync", want)
	p.until(monday.Add(2*time.Hour), 10*time.Minute)
	p.cycle()
	d.checkReplies("two hours later", want)
	runs, err := p.s.runs.RuleRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := runs["pending-reminder"].LastRun; !got.Equal(monday) {
		t.Errorf("pending-reminder's last run is %v, want Monday 09:00 (the kicked cycle's)", got)
	}
}
