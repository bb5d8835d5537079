package scheduler

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// blockingDesk holds AddNote until released.
type blockingDesk struct {
	firing.Desk
	entered chan struct{}
	release chan struct{}
}

// Stopping keeps the wrapper on the cycle's view of the desk.
func (d blockingDesk) Stopping(stop context.Context) firing.Desk {
	d.Desk = d.Desk.Stopping(stop)
	return d
}

func (d blockingDesk) AddNote(ctx context.Context, id int64, n *sdclient.NoteRequest) (*sdclient.Conversation, *sdclient.Response, error) {
	close(d.entered)
	<-d.release
	return d.Desk.AddNote(ctx, id, n)
}

func TestStopLetsInFlightActionsFinish(t *testing.T) {
	e := newEnv(t, urgentRules)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4})
	d := blockingDesk{Desk: firing.ClientDesk(e.client), entered: make(chan struct{}), release: make(chan struct{})}
	s := e.another(d, urgentRules, e.st, e.notif)
	if err := s.Start(t.Context()); err != nil { // the duration job runs at once
		t.Fatal(err)
	}
	select {
	case <-d.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the first cycle never reached the note")
	}
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stopped <- s.Stop(ctx)
	}()
	// Stop cancels the job's context; the note under way must still finish.
	eventually(t, "Stop to begin", 10*time.Second, func() bool { return s.stopping.Load() })
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while an action was under way", err)
	default:
	}
	close(d.release)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if n := len(e.notesWith(tk.ID, "Paged on-call.")); n != 1 {
		t.Errorf("%d notes, want the in-flight one", n)
	}
	info, _, err := e.st.FiringState(t.Context(), rules.FiringKey{Rule: "page-urgent", TicketID: tk.ID})
	if err != nil || info.State != rules.FiringDone {
		t.Errorf("firing %+v (%v), want done", info, err)
	}
	if err := s.Start(t.Context()); err == nil {
		t.Error("a stopped scheduler started again")
	}
}

// TestStopAbandonsActionsWaitingForBudget: at Stop, an action still
// waiting for rate budget is not sent: Stop returns at once instead of
// after the budget window, and the firing is released with the actions
// done so far, for the next start to resume.
func TestStopAbandonsActionsWaitingForBudget(t *testing.T) {
	e := newEnv(t, urgentRules)
	// 7 requests a minute: statuses, the full sync's filter and the change
	// feed of the cycle it kicks (an empty desk), then the next cycle's
	// feed and, per ticket, a re-read and a note: the second note has to
	// wait a minute for budget. (The tickets come after the first full
	// sync, so that no cycle can act on them while it runs.)
	s, ids := startOnTightBudget(t, e, testLogger(t))
	if err := stopAfterBothAlerts(t, e, s); err != nil {
		t.Fatalf("Stop: %v (an action waiting for budget held it)", err)
	}
	var noted, released int
	for _, id := range ids {
		if len(e.notesWith(id, "Paged on-call.")) == 1 {
			noted++
			continue
		}
		info, _, err := e.st.FiringState(t.Context(), rules.FiringKey{Rule: "page-urgent", TicketID: id})
		if err != nil || info.State != rules.FiringPending || !info.LeaseUntil.IsZero() ||
			!strings.Contains(info.LastError, "stopping") || len(info.Done) != 1 {
			t.Errorf("ticket %d without its note: firing %+v (%v), want pending, released, alert done", id, info, err)
		}
		released++
	}
	if noted != 1 || released != 1 {
		t.Errorf("%d tickets noted and %d released, want 1 and 1", noted, released)
	}
}

// startOnTightBudget starts a scheduler over e's desk through a client
// allowed 7 requests a minute (see TestStopAbandonsActionsWaitingForBudget),
// waits for its first full sync and the cycle it kicks, then adds two
// urgent tickets, a and b: the next cycle's second note waits a minute for
// budget. The scheduler is stopped when the test ends.
func startOnTightBudget(t *testing.T, e *env, log *slog.Logger, opts ...Option) (*Scheduler, []int64) {
	t.Helper()
	client := testkit.DeskClient(t, e.sim, sdclient.WithRatePerMinute(7), sdclient.WithReserve(0))
	s, err := New(log, firing.ClientDesk(client), mustRules(t, urgentRules), e.st, e.notif,
		append([]Option{WithClock(e.clk), WithSingleton(false)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	eventually(t, "the first full sync and the cycle it kicks", 30*time.Second, func() bool { return len(e.sim.Desk.Requests()) == 3 })
	s.inflight.Wait()
	return s, []int64{
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 4}).ID,
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "b", Priority: 4}).ID,
	}
}

// text is what the buffer holds.
func (s *syncBuffer) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBudgetWaitReleasesTheFiring: an action whose context runs out while
// its request waits for deskbot's own rate budget is not an error and does
// not hold the firing's lease: the firing is released for the next cycle
// at once, logged at info, counted as deferred (not failed: the shipped
// DeskbotActionsFailing alert counts failed decisions), and /ticket why
// says so plainly.
func TestBudgetWaitReleasesTheFiring(t *testing.T) {
	e := newEnv(t, urgentRules)
	// 7 requests a minute (see TestStopAbandonsActionsWaitingForBudget):
	// the second ticket's note waits a minute for budget, longer than the
	// action timeout.
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, ids := startOnTightBudget(t, e, log, WithActionTimeout(time.Second))
	s.runCycle(s.baseCtx, once) // the rule ran a moment ago: run it now regardless
	var noted, released int
	r := mustRules(t, urgentRules).Rules()[0]
	for _, id := range ids {
		if len(e.notesWith(id, "Paged on-call.")) == 1 {
			noted++
			continue
		}
		key := rules.FiringKey{Rule: "page-urgent", TicketID: id}
		info, ok, err := e.st.FiringState(t.Context(), key)
		if err != nil || !ok || info.State != rules.FiringPending || !info.LeaseUntil.IsZero() || len(info.Done) != 1 {
			t.Errorf("ticket %d without its note: firing %+v (%v), want pending, released (no lease), alert done", id, info, err)
		}
		if line := plan.LedgerLine(r, info, ok); !strings.Contains(line, "waited for deskbot's request budget; goes on next cycle") || strings.Contains(line, "refused") {
			t.Errorf("why line %q, want it to say plainly that it waited for the budget", line)
		}
		released++
	}
	if noted != 1 || released != 1 {
		t.Errorf("%d tickets noted and %d released, want 1 and 1", noted, released)
	}
	out := logs.text()
	if !strings.Contains(out, `level=INFO msg="waiting for the request budget; the firing goes on next cycle"`) {
		t.Errorf("no info line for the budget wait in the log:\n%s", out)
	}
	if strings.Contains(out, "level=ERROR") || strings.Contains(out, "level=WARN") {
		t.Errorf("a WARN or ERROR line for a budget wait:\n%s", out)
	}
	for _, c := range []struct {
		what string
		got  float64
		want float64
	}{
		{"decisions failed", metricValue(t, s.m.Exec.Decisions.WithLabelValues("page-urgent", "failed")), 0},
		{"decisions deferred", metricValue(t, s.m.Exec.Decisions.WithLabelValues("page-urgent", "deferred")), 1},
		{"note actions error", metricValue(t, s.m.Exec.Actions.WithLabelValues("note", "error")), 0},
		{"note actions deferred", metricValue(t, s.m.Exec.Actions.WithLabelValues("note", "deferred")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestLedgerLineSaysStoppedPlainly: /ticket why shows a firing released by
// a stop as stopped, not as a refusal with the raw error.
func TestLedgerLineSaysStoppedPlainly(t *testing.T) {
	r := mustRules(t, urgentRules).Rules()[0]
	for _, last := range []string{
		plan.LedgerStopped + ": alert #it-oncall: sdclient: add note: " + sdclient.ErrStopped.Error(),
		"sdclient: add note: " + sdclient.ErrStopped.Error(), // released before the plain prefix
	} {
		info := rules.FiringRecord{Episode: 1, Seq: 1, Open: true, State: rules.FiringPending, LastError: last}
		line := plan.LedgerLine(r, info, true)
		if !strings.Contains(line, "stopped by a shutdown; resumes next cycle") || strings.Contains(line, "refused") || strings.Contains(line, "sdclient") {
			t.Errorf("why line %q, want it to say plainly that a shutdown stopped it", line)
		}
	}
	info := rules.FiringRecord{Episode: 1, Seq: 1, Open: true, State: rules.FiringPending, LastError: "There is no agent with this id"}
	if line := plan.LedgerLine(r, info, true); !strings.Contains(line, "last attempt refused: There is no agent with this id") {
		t.Errorf("why line %q, want the refusal", line)
	}
}

// TestStopLogsStoppedWillResume: an action cut by a stop (SIGTERM, SIGHUP)
// before its request was sent is logged at info as stopped, to resume, not
// as an error or a refusal.
func TestStopLogsStoppedWillResume(t *testing.T) {
	e := newEnv(t, urgentRules)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, _ := startOnTightBudget(t, e, log)
	if err := stopAfterBothAlerts(t, e, s); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	out := logs.text()
	if !strings.Contains(out, `level=INFO msg="stopped, will resume"`) {
		t.Errorf("no info line saying the stopped action will resume:\n%s", out)
	}
	if strings.Contains(out, "level=ERROR") || strings.Contains(out, "refused") {
		t.Errorf("a stopped action logged as an error or a refusal:\n%s", out)
	}
}

// stopAfterBothAlerts runs a cycle over the two tickets of
// startOnTightBudget and stops the scheduler once both alerts went out:
// the second ticket's note is then waiting for budget.
func stopAfterBothAlerts(t *testing.T, e *env, s *Scheduler) error {
	t.Helper()
	go s.runCycle(s.baseCtx, once) // the rule ran a moment ago: run it now regardless
	eventually(t, "both alerts", 30*time.Second, func() bool { return len(e.notif.list()) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.Stop(ctx)
}
