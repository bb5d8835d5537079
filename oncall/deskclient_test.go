package oncall_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// newSimDesk returns the escalator's desk over a client of a simulated
// desk, and the simulator.
func newSimDesk(t *testing.T, key string) (oncall.Desk, *sdsim.Server) {
	t.Helper()
	sim := sdsim.NewServer()
	t.Cleanup(sim.Close)
	c, err := sdclient.New(sim.URL, key, sdclient.WithHTTPClient(sim.Client()), sdclient.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	return oncall.ClientDesk(c), sim
}

// The note that records an acknowledgement is private, as HTML: the text
// escaped, its line breaks kept.
func TestClientDeskAddNote(t *testing.T) {
	d, sim := newSimDesk(t, sdsim.DefaultAPIKey)
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN down"})
	if err := d.AddNote(t.Context(), tk.ID, "Acknowledged by <alice>\nat 09:00"); err != nil {
		t.Fatal(err)
	}
	cs := sim.Desk.Conversations(tk.ID)
	if len(cs) != 1 || !cs[0].Private || cs[0].Body != "Acknowledged by &lt;alice&gt;<br>at 09:00" {
		t.Fatalf("conversations %+v, want one private note with the escaped text", cs)
	}
	if err := d.AddNote(t.Context(), 999, "x"); err == nil {
		t.Error("note on a missing ticket: no error")
	}
}

// Resolved, closed, deleted and missing tickets page nobody; open ones
// (custom open statuses too) do; a desk that refuses says so.
func TestClientDeskTicketClosed(t *testing.T) {
	d, sim := newSimDesk(t, sdsim.DefaultAPIKey)
	tests := []struct {
		name   string
		ticket sdsim.Ticket
		want   bool
	}{
		{"open", sdsim.Ticket{Status: 2}, false},
		{"pending", sdsim.Ticket{Status: 3}, false},
		{"resolved", sdsim.Ticket{Status: 4}, true},
		{"closed", sdsim.Ticket{Status: 5}, true},
		{"deleted", sdsim.Ticket{Status: 2, Deleted: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := sim.Desk.AddTicket(tt.ticket)
			got, err := d.TicketClosed(t.Context(), tk.ID)
			if err != nil || got != tt.want {
				t.Errorf("TicketClosed = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if got, err := d.TicketClosed(t.Context(), 999); err != nil || !got {
		t.Errorf("missing ticket: TicketClosed = %v, %v; want true", got, err)
	}
	denied, sim2 := newSimDesk(t, "wrong-key")
	tk := sim2.Desk.AddTicket(sdsim.Ticket{})
	if _, err := denied.TicketClosed(t.Context(), tk.ID); err == nil {
		t.Error("refused request: no error")
	}
}

// Issue 23, 6: the acknowledgement note names a desk agent by name, with
// the e-mail; anyone the desk does not know keeps the e-mail alone.
func TestAckNoteNamesTheAgent(t *testing.T) {
	d, sim := newSimDesk(t, sdsim.DefaultAPIKey)
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Boss", LastName: "Person", Email: "boss@example.com"})
	esc, err := oncall.NewEscalator(mustParse(t, fixture(t, "escalator.yaml")), &oncall.MemStore{}, &fakePager{}, d,
		oncall.WithClock(func() time.Time { return t0 }))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ by, want string }{
		{"boss@example.com", "On-call page acknowledged by Boss Person (boss@example.com) at 2026-03-02 12:05:00 UTC"},
		{"alice@example.com", "On-call page acknowledged by alice@example.com at 2026-03-02 12:05:00 UTC"},
	} {
		tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN down", Priority: 4})
		spec := oncall.PageSpec{Rule: "page-urgent", TicketID: tk.ID, Episode: 1, Policy: "it-urgent", Channel: "#it-oncall", Text: "Urgent"}
		p, _, err := esc.Start(t.Context(), spec, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := esc.Ack(t.Context(), p.Key, tc.by, t0.Add(5*time.Minute)); err != nil || !ok {
			t.Fatalf("ack by %s: %v %v", tc.by, ok, err)
		}
		cs := sim.Desk.Conversations(tk.ID)
		if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, tc.want) {
			t.Errorf("ack by %s: notes %+v, want one starting %q", tc.by, cs, tc.want)
		}
	}
}
