package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	out := buf.String()
	for _, s := range []string{
		`ticket #101 "Core switch in building B is down"`,
		"page it-urgent in #it-oncall: Urgent ticket #101 is unassigned: Core switch in building B is down",
		"note: deskbot paged the on-call (policy it-urgent) at 2025-03-10T10:00:00Z.",
		`update: {"priority":4,"tags":["overdue"]}`,
		"note: Overdue by 17h (due 2025-03-09T17:00:00Z); deskbot raised the priority to urgent.",
		"alert #it-desk: Ticket #107 has been unassigned for 2h30m: Payroll system unreachable",
		`reply: Hello, we are still waiting for your answer on "VPN drops every few minutes".\n`,
		"7 decision(s) on 5 ticket(s)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("plan lacks %q; plan:\n%s", s, out)
		}
	}
}
