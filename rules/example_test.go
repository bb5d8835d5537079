package rules

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
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
	tickets := fixtureTickets(t)
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
		// Unassigned, so not raised by overdue-escalate; it pages, so
		// unassigned-15m leaves it alone: one message.
		107: {"page-urgent-unassigned"},
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

// TestExampleRulesDoNotFeedEachOther runs the example's rules over a grid
// of tickets (every open kind of status, priority, owner and due date):
// no rule's update makes another rule match that did not already (the
// storm of issue 17: overdue-escalate raised pending and unassigned
// tickets to urgent, and page-urgent-unassigned then paged them), and no
// ticket gets more than one chat message (an alert or a page).
func TestExampleRulesDoNotFeedEachOther(t *testing.T) {
	s := loadExample(t)
	chat := map[string]bool{}
	for _, r := range s.Rules() {
		for _, k := range r.ActionKinds() {
			chat[r.Name] = chat[r.Name] || k == ActionAlert || k == ActionPage || k == ActionDM
		}
	}
	created := fixtureNow.Add(-2 * time.Hour)
	var id int64
	for _, status := range []int{2, 3, 6, 7} {
		for priority := 1; priority <= 4; priority++ {
			for _, agent := range []int64{0, 12001} {
				for _, due := range []time.Duration{-time.Hour, 20 * time.Minute, time.Hour} {
					id++
					dueBy := fixtureNow.Add(due)
					tk := &sdclient.Ticket{ID: id, Subject: fmt.Sprintf("t%d", id), Status: status, Priority: priority,
						ResponderID: &agent, DueBy: &dueBy, CreatedAt: created, UpdatedAt: created}
					name := fmt.Sprintf("status %d priority %d agent %d due %v", status, priority, agent, due)
					before := firing(s, tk, fixtureNow)
					messages := 0
					for _, r := range before {
						if chat[r] {
							messages++
						}
					}
					if messages > 1 {
						t.Errorf("%s: %d chat messages (%v), want at most one", name, messages, before)
					}
					after := *tk
					for _, d := range Plan(s, []*sdclient.Ticket{tk}, fixtureNow) {
						for _, a := range d.Actions {
							if a.Kind == ActionUpdate {
								applyUpdate(&after, a.Update)
							}
						}
					}
					for _, r := range firing(s, &after, fixtureNow.Add(time.Minute)) {
						if !slices.Contains(before, r) {
							t.Errorf("%s: the rules' own updates make %s fire (before: %v)", name, r, before)
						}
					}
				}
			}
		}
	}
}

// firing lists the rules whose query and if hold on t at now (cron
// schedules aside).
func firing(s *Set, t *sdclient.Ticket, now time.Time) []string {
	var out []string
	for _, d := range Plan(s, []*sdclient.Ticket{t}, now) {
		out = append(out, d.Rule)
	}
	return out
}

// applyUpdate applies the fields of u the example's rules set.
func applyUpdate(t *sdclient.Ticket, u *sdclient.TicketUpdate) {
	if u == nil {
		return
	}
	if u.Priority != nil {
		t.Priority = *u.Priority
	}
	if u.Status != nil {
		t.Status = *u.Status
	}
	if u.ResponderID != nil {
		t.ResponderID = u.ResponderID
	}
	if u.GroupID != nil {
		t.GroupID = u.GroupID
	}
	if u.Tags != nil {
		t.Tags = append(append([]string(nil), t.Tags...), *u.Tags...)
	}
}

// fixtureTickets reads testdata/tickets.json, the tickets the example
// rules file is planned against.
func fixtureTickets(t *testing.T) []*sdclient.Ticket {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "tickets.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tickets, err := ReadTickets(f)
	if err != nil {
		t.Fatal(err)
	}
	return tickets
}
