package feed

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

var t0 = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

// clientDesk is the real sdclient client as the feed's Desk (the
// execution step's adapter, which reads what the feed reads).
func clientDesk(c *sdclient.Client) Desk { return firing.ClientDesk(c) }

// env is a feed over the desk simulator, through the real client, kept
// in a real SQLite state store.
type env struct {
	t      testing.TB
	clk    *clockwork.FakeClock
	sim    *sdsim.Server
	client *sdclient.Client
	st     *store.Store
	stPath string
	reg    *prometheus.Registry
	f      *Feed
}

func newEnv(t testing.TB, simOpts []sdsim.Option, opts ...Option) *env {
	t.Helper()
	e := &env{t: t, reg: prometheus.NewRegistry()}
	e.clk, e.sim = testkit.FakeDesk(t, t0, simOpts...)
	e.client = testkit.DeskClient(t, e.sim)
	e.stPath = filepath.Join(t.TempDir(), "state.db")
	e.st = testkit.Store(t, e.stPath)
	e.f = e.newFeed(clientDesk(e.client), append([]Option{WithRegistry(e.reg)}, opts...)...)
	return e
}

// newFeed is another feed of e's desk (through desk) and store.
func (e *env) newFeed(desk Desk, opts ...Option) *Feed {
	e.t.Helper()
	base := []Option{WithLogger(testkit.Logger()), WithClock(e.clk), WithMirrorStore(e.st)}
	f, err := New(desk, append(base, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// sync runs one sync of f, waiting for a full sync, and fails the test
// when it is not complete.
func (e *env) sync(f *Feed) *Synced {
	e.t.Helper()
	res := f.Sync(e.t.Context(), Inline())
	if !res.Complete {
		e.t.Fatalf("sync incomplete: %v", res.Err)
	}
	return res
}

// mirrored is f's snapshot by id.
func mirrored(f *Feed) map[int64]*sdclient.Ticket {
	out := map[int64]*sdclient.Ticket{}
	for _, t := range f.Snapshot() {
		out[t.ID] = t
	}
	return out
}

// counted is the value of the counter or gauge name registered on reg.
func counted(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			m := mf.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s registered", name)
	return 0
}

func ids(ts []*sdclient.Ticket) []int64 {
	out := make([]int64, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ID)
	}
	slices.Sort(out)
	return out
}
