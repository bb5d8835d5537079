package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/jonboulle/clockwork"
)

// DeskClient is the real client on the desk simulator sim, or t fails:
// a budget no test spends, two attempts, and retries that do not wait
// (so a test that injects a fault sees the retry at once, and nothing
// sleeps on the fake clock); opts come after these and may override them.
func DeskClient(t testing.TB, sim *sdsim.Server, opts ...sdclient.Option) *sdclient.Client {
	t.Helper()
	base := []sdclient.Option{
		sdclient.WithRatePerMinute(1000000),
		sdclient.WithMaxAttempts(2),
		sdclient.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }),
	}
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FakeDesk is the desk simulator on a fake clock standing at at, closed
// when the test ends: the desk stamps its tickets and changes with the
// clock the test advances; opts come after the clock.
func FakeDesk(t testing.TB, at time.Time, opts ...sdsim.Option) (*clockwork.FakeClock, *sdsim.Server) {
	clk := clockwork.NewFakeClockAt(at)
	sim := sdsim.NewServer(append([]sdsim.Option{sdsim.WithClock(clk.Now)}, opts...)...)
	t.Cleanup(sim.Close)
	return clk, sim
}
