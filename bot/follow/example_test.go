package follow

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// noPager drops the example's pages: this test is about its digest.
type noPager struct{}

func (noPager) Page(context.Context, oncall.PageRequest) error { return nil }

// The example's morning digest (cron "0 8 * * 1-5") carries on across
// restarts like the other time rules: nothing over the weekend, a restart
// at 08:20 on Monday still posts the 08:00 digest, once, and a restart at
// 08:45 posts nothing more that day.
func TestExampleDigestCarriesOn(t *testing.T) {
	y, err := os.ReadFile(filepath.Join("..", "..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	friday := time.Date(2026, 11, 27, 11, 7, 0, 0, time.UTC) // the first start
	monday := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)  // 09:00
	clk := clockwork.NewFakeClockAt(friday)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now), sdsim.WithGenerated(1, 200))
	t.Cleanup(sim.Close)
	client := testkit.DeskClient(t, sim)
	path := filepath.Join(t.TempDir(), "state.db")
	n := &digestChat{}
	// start is one deskbot process on the shared store: a restart.
	start := func() *scheduler.Scheduler {
		st, err := store.Open(t.Context(), path, store.WithClock(clk.Now))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		set := mustRules(t, string(y))
		esc, err := oncall.NewEscalator(set.OnCall(), st, noPager{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scheduler.New(testLogger(t), firing.ClientDesk(client), set, st, &recAlerts{},
			scheduler.WithClock(clk), scheduler.WithSingleton(false), scheduler.WithRegistry(prometheus.NewRegistry()),
			scheduler.WithEscalator(esc, 0), scheduler.WithTickFollower(NewDigests(n, st)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// until runs a cycle every step from the clock's time until before
	// end, then sets the clock to end.
	until := func(s *scheduler.Scheduler, end time.Time, step time.Duration) {
		for clk.Now().Before(end) {
			if _, err := s.RunCycle(t.Context()); err != nil {
				t.Fatal(err)
			}
			clk.Advance(min(step, end.Sub(clk.Now())))
		}
	}
	until(start(), monday.Add(-70*time.Minute), time.Hour) // stops at 07:50
	if posts, _ := n.runs(); len(posts) != 0 {
		t.Fatalf("%d digests before Monday 08:00, want none", len(posts))
	}
	clk.Advance(monday.Add(-40 * time.Minute).Sub(clk.Now())) // 08:20
	until(start(), monday.Add(-15*time.Minute), 5*time.Minute)
	until(start(), monday.Add(3*time.Hour), 15*time.Minute) // 08:45
	posts, _ := n.runs()
	if len(posts) != 1 || !posts[0].At.Equal(monday.Add(-40*time.Minute)) {
		var at []time.Time
		for _, p := range posts {
			at = append(at, p.At)
		}
		t.Errorf("digests posted at %v, want one, at the 08:20 restart", at)
	}
}
