package testkit

import (
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// The address is one another machine could reach this one at: IPv4 and
// not loopback; "" only says there is none.
func TestNonLoopbackIPv4(t *testing.T) {
	ip := NonLoopbackIPv4()
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this machine")
	}
	p := net.ParseIP(ip)
	if p == nil || p.To4() == nil || p.IsLoopback() {
		t.Errorf("NonLoopbackIPv4() = %q, want a non-loopback IPv4 address", ip)
	}
}

func TestRulesLoads(t *testing.T) {
	set := Rules(t, "version: 1\nrules:\n  - name: a\n    query: \"status:open\"\n    actions: [{note: \"x\"}]\n")
	if set == nil || len(set.Rules()) != 1 || set.Rules()[0].Name != "a" {
		t.Fatalf("Rules loaded %+v, want the one rule a", set)
	}
}

// OncallRules loads, with the member given first on the schedule that
// the policy pages, and one rule.
func TestOncallRulesLoads(t *testing.T) {
	set := Rules(t, OncallRules("U0TEST"))
	sched := set.OnCall().Schedule("primary")
	if sched == nil || !slices.Equal(sched.Members, []string{"U0TEST", "bob@example.com"}) {
		t.Fatalf("schedule primary %+v, want members U0TEST, bob@example.com", sched)
	}
	if set.OnCall().Policy("urgent") == nil || len(set.Rules()) != 1 {
		t.Fatalf("want the policy urgent and one rule, got %d rules", len(set.Rules()))
	}
}

// A logger that writes nothing without -v must still take every call.
func TestLoggerWithoutVerbose(t *testing.T) {
	if testing.Verbose() {
		t.Skip("with -v the logger writes to stderr")
	}
	l := Logger()
	if l.Enabled(t.Context(), -8) {
		t.Error("the quiet logger is enabled for debug")
	}
	l.Info("not shown", "k", 1)
}

// The store is usable while the test runs and closed after it.
func TestStoreOpensAndCloses(t *testing.T) {
	var st *store.Store
	t.Run("open", func(t *testing.T) {
		st = Store(t, filepath.Join(t.TempDir(), "state.db"))
		if err := st.Ping(t.Context()); err != nil {
			t.Fatalf("ping the open store: %v", err)
		}
	})
	if err := st.Ping(t.Context()); err == nil {
		t.Error("the store still answers after its test ended")
	}
}

// A desk client of the tests retries a refusal at once (a Retry-After of
// an hour does not hold it up) and gives up after its second attempt.
func TestDeskClientRetriesWithoutWaiting(t *testing.T) {
	sim := sdsim.NewServer()
	t.Cleanup(sim.Close)
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "printer"})
	c := DeskClient(t, sim)

	sim.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultRateLimit, RetryAfter: 3600})
	start := time.Now()
	got, _, err := c.Tickets.Get(t.Context(), tk.ID)
	if err != nil || got.Subject != "printer" {
		t.Fatalf("Get after one refusal = %+v, %v; want the ticket", got, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the retry waited %v", d)
	}

	sim.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultServerError, Count: 2})
	if _, _, err := c.Tickets.Get(t.Context(), tk.ID); err == nil {
		t.Error("Get after two refusals succeeded; want the second attempt's error")
	}
}

// The fake desk's clock is the one the test advances: a ticket changed
// after the clock moved carries the new time; the options given apply.
func TestFakeDeskFollowsItsClock(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	clk, sim := FakeDesk(t, at)
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "printer"})
	clk.Advance(time.Hour)
	sim.Desk.UpdateTicket(tk.ID, func(x *sdsim.Ticket) { x.Subject = "printer jam" })
	got, ok := sim.Desk.Ticket(tk.ID)
	if !ok || !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at.Add(time.Hour)) {
		t.Errorf("ticket %+v (found %v), want created at %v and updated an hour later", got, ok, at)
	}
	if _, gen := FakeDesk(t, at, sdsim.WithGenerated(1, 3)); len(gen.Desk.TicketIDs()) != 3 {
		t.Errorf("a fake desk with 3 generated tickets holds %d", len(gen.Desk.TicketIDs()))
	}
}

// NoteRules loads: one rule a name, in the order given, each writing the
// note of its name on the open tickets.
func TestNoteRulesLoads(t *testing.T) {
	set := Rules(t, NoteRules("a", "b"))
	var got []string
	for _, r := range set.Rules() {
		acts, err := set.RenderActions(r, &sdclient.Ticket{ID: 1, Status: 2}, time.Now())
		if err != nil || len(acts) != 1 || acts[0].Kind != rules.ActionNote || acts[0].Text != r.Name {
			t.Errorf("rule %s: actions %+v (%v), want the note %q", r.Name, acts, err, r.Name)
		}
		got = append(got, r.Name)
	}
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("rules %v, want a, b", got)
	}
}
