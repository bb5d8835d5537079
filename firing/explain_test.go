package firing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// friday is when the example's deskbot first starts (Friday 2026-11-27
// 11:07 UTC), and monday the first time of pending-reminder after it.
var (
	friday = time.Date(2026, 11, 27, 11, 7, 0, 0, time.UTC)
	monday = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
)

// /ticket why and rules why say when each rule runs next, from the
// rules' last runs in the store: the answer NextRun gives the scheduler and
// the plan.
func TestExplainSaysNextRuns(t *testing.T) {
	y, err := os.ReadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set := loadRules(t, y)
	st := openStore(t)
	if err := st.SetRuleRuns(t.Context(),
		store.RuleRun{Rule: "pending-reminder", Schedule: plan.ScheduleKey(set.Rule("pending-reminder")), Since: friday},
		store.RuleRun{Rule: "overdue-escalate", Schedule: plan.ScheduleKey(set.Rule("overdue-escalate")), Since: friday, LastRun: monday.Add(18 * time.Minute)},
	); err != nil {
		t.Fatal(err)
	}
	tk := &sdclient.Ticket{ID: 7, Subject: "printer", Status: sdclient.StatusPending, CreatedAt: friday, UpdatedAt: friday}
	for _, c := range []struct {
		now  time.Time
		want []string
	}{
		{friday.Add(time.Hour), []string{
			"  pending-reminder: 2026-11-30T09:00:00Z, in 68h53m (cron 0 9 * * 1-5)\n",
			"  page-urgent-unassigned: at the next cycle (every 1m)\n",
		}},
		{monday.Add(20 * time.Minute), []string{
			"  pending-reminder: now, catching up its run of 2026-11-30T09:00:00Z (cron 0 9 * * 1-5, catch_up 1h)\n",
			"  overdue-escalate: 2026-11-30T09:23:00Z, in 3m (every 5m)\n",
			"  unassigned-15m: at the next cycle (every 1m)\n",
		}},
		{monday.Add(6 * time.Hour), []string{
			"  pending-reminder: 2026-12-01T09:00:00Z, in 18h (cron 0 9 * * 1-5)\n",
		}},
	} {
		ex := NewExplainer(nil, func() *rules.Set { return set }, nil, func() time.Time { return c.now }, ExplainRuns(st))
		out, err := ex.ExplainTicket(t.Context(), tk)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(out, "\nNext runs:\n") || !strings.Contains(out, w) {
				t.Errorf("at %v the explanation lacks %q:\n%s", c.now, w, out)
			}
		}
	}
}

func loadRules(t *testing.T, y []byte) *rules.Set {
	t.Helper()
	set, err := rules.Load("rules.example.yaml", y)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	return testkit.Store(t, filepath.Join(t.TempDir(), "state.db"))
}
