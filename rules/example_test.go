package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var fixtureNow = time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)

func loadExample(t testing.TB) *Set {
	t.Helper()
	s, err := LoadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatalf("rules.example.yaml does not load:\n%v", err)
	}
	return s
}

func TestExampleLoadsAndPlans(t *testing.T) {
	s := loadExample(t)
	f, err := os.Open(filepath.Join("testdata", "tickets.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tickets, err := ReadTickets(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(tickets) != 10 {
		t.Fatalf("fixture has %d tickets, want 10", len(tickets))
	}
	oc := s.OnCall()
	if oc == nil || oc.Policy("it-urgent") == nil || len(oc.Schedules) != 2 {
		t.Fatalf("example on-call section: %+v", oc)
	}
	// 2025-03-10 is in the week starting 2025-03-03, the ninth since start
	// (2025-01-06): member 9 mod 3 = alice; frank on the secondary (9 mod 2).
	st := oc.WhoIsOnCall(fixtureNow)
	if st[0].Now.Member != "alice@example.com" || st[0].Next.Member != "bob@example.com" || st[1].Now.Member != "frank@example.com" {
		t.Errorf("who is on call at %s: %+v", fixtureNow, st)
	}
	decisions := Plan(s, tickets, fixtureNow)
	got := map[int64][]string{}
	for _, d := range decisions {
		if d.Err != nil {
			t.Errorf("rule %s on #%d: unexpected error %v", d.Rule, d.TicketID, d.Err)
		}
		got[d.TicketID] = append(got[d.TicketID], d.Rule)
	}
	want := map[int64][]string{
		101: {"page-urgent-unassigned"},
		102: {"unassigned-15m"},
		103: {"overdue-escalate"}, // custom open status 6
		104: {"pending-reminder"},
		107: {"page-urgent-unassigned", "overdue-escalate", "unassigned-15m"},
	}
	for id, rules := range want {
		if !slices.Equal(got[id], rules) {
			t.Errorf("ticket #%d: rules %v fire, want %v", id, got[id], rules)
		}
	}
	for id, rules := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("ticket #%d: rules %v fire, want none", id, rules)
		}
	}

	var buf bytes.Buffer
	if err := WritePlan(&buf, decisions); err != nil {
		t.Fatal(err)
	}
	// The whole plan, as `deskbot rules test rules.example.yaml --tickets
	// testdata/tickets.json --now 2025-03-10T10:00:00Z` prints it: every
	// action of every firing with its rendered text, and nothing else.
	golden, err := os.ReadFile(filepath.Join("testdata", "example.plan"))
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(golden) {
		t.Errorf("plan differs from testdata/example.plan; got:\n%s", got)
	}
}
