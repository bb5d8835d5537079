package fakedesk

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// Sim starts a desk simulator with the agents Alice and Bob, the
// requester Carol and her one ticket, "Printer on fire" (urgent, open),
// and returns it, a client of it and the ticket's id. Wrap the client in
// bot.NewDeskAdapter for a real desk.
func Sim(t testing.TB) (*sdsim.Server, *sdclient.Client, int64) {
	t.Helper()
	sim := sdsim.NewServer()
	t.Cleanup(sim.Close)
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Bob", LastName: "Builder", Email: "bob@example.com"})
	carol := sim.Desk.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer on fire", Priority: 4, RequesterID: carol.ID})
	c, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(sim.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return sim, c, tk.ID
}

// Mirror is a real ticket mirror (an in-memory store) that counts its
// loads.
type Mirror struct {
	*store.Store
	Loads atomic.Int32
}

// MirrorLoad implements bot.Mirror, counting the load.
func (m *Mirror) MirrorLoad(ctx context.Context, ws int64) ([]*sdclient.Ticket, store.MirrorState, error) {
	m.Loads.Add(1)
	return m.Store.MirrorLoad(ctx, ws)
}

// OpenMirror opens an empty Mirror, closed when the test ends.
func OpenMirror(t testing.TB) *Mirror {
	t.Helper()
	st, err := store.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &Mirror{Store: st}
}

// MirrorClock is the fixed clock of the mirror tests, and the mirror's
// cursor a minute behind it (the desk's change feed read a minute ago).
func MirrorClock() (now, cursor time.Time) {
	now = time.Date(2026, 3, 9, 9, 42, 12, 0, time.UTC)
	return now, now.Add(-time.Minute)
}
