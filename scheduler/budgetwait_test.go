package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// text is what the buffer holds.
func (s *syncBuffer) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBudgetWaitReleasesTheFiring: an action whose context runs out while
// its request waits for deskbot's own rate budget is not an error and does
// not hold the firing's lease: the firing is released for the next cycle
// at once, logged at warn, and /ticket why says so plainly.
func TestBudgetWaitReleasesTheFiring(t *testing.T) {
	e := newEnv(t, urgentRules)
	// 7 requests a minute (see TestStopAbandonsActionsWaitingForBudget):
	// the second ticket's note waits a minute for budget, longer than the
	// action timeout.
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, ids := startOnTightBudget(t, e, log, WithActionTimeout(time.Second))
	s.runCycle(s.baseCtx, kicked)
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
		if line := ledgerLine(r, info, ok); !strings.Contains(line, "waited for deskbot's request budget; goes on next cycle") || strings.Contains(line, "refused") {
			t.Errorf("why line %q, want it to say plainly that it waited for the budget", line)
		}
		released++
	}
	if noted != 1 || released != 1 {
		t.Errorf("%d tickets noted and %d released, want 1 and 1", noted, released)
	}
	out := logs.text()
	if !strings.Contains(out, `level=WARN msg="waiting for the request budget; the firing goes on next cycle"`) {
		t.Errorf("no warn line for the budget wait in the log:\n%s", out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("an ERROR line for a budget wait:\n%s", out)
	}
}

// TestLedgerLineSaysStoppedPlainly: /ticket why shows a firing released by
// a stop as stopped, not as a refusal with the raw error.
func TestLedgerLineSaysStoppedPlainly(t *testing.T) {
	r := mustRules(t, urgentRules).Rules()[0]
	for _, last := range []string{
		ledgerStopped + ": alert #it-oncall: sdclient: add note: " + sdclient.ErrStopped.Error(),
		"sdclient: add note: " + sdclient.ErrStopped.Error(), // released before the plain prefix
	} {
		info := rules.FiringRecord{Episode: 1, Seq: 1, Open: true, State: rules.FiringPending, LastError: last}
		line := ledgerLine(r, info, true)
		if !strings.Contains(line, "stopped by a shutdown; resumes next cycle") || strings.Contains(line, "refused") || strings.Contains(line, "sdclient") {
			t.Errorf("why line %q, want it to say plainly that a shutdown stopped it", line)
		}
	}
	info := rules.FiringRecord{Episode: 1, Seq: 1, Open: true, State: rules.FiringPending, LastError: "There is no agent with this id"}
	if line := ledgerLine(r, info, true); !strings.Contains(line, "last attempt refused: There is no agent with this id") {
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
	go s.runCycle(s.baseCtx, kicked)
	eventually(t, "both alerts", 30*time.Second, func() bool { return len(e.notif.list()) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
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

// A cycle incomplete only because the first full sync is under way (every
// first start) is logged at info; any other cause at warn.
func TestIncompleteLevel(t *testing.T) {
	first := fmt.Errorf("the default workspace: %w", errFirstSync)
	other := errors.New("the default workspace: change feed: 503")
	for _, c := range []struct {
		err  error
		want slog.Level
	}{
		{first, slog.LevelInfo},
		{errors.Join(first, fmt.Errorf("the workspace 2: %w", errFirstSync)), slog.LevelInfo},
		{errors.Join(first, other), slog.LevelWarn},
		{fmt.Errorf("sync: %w", errors.Join(first, other)), slog.LevelWarn},
		{other, slog.LevelWarn},
	} {
		if got := incompleteLevel(c.err); got != c.want {
			t.Errorf("incompleteLevel(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
