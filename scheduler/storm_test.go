package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// stormRules alerts about urgent unassigned tickets, then notes; its
// group_over and max_firings_per_cycle are filled in.
const stormRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: urgent
    query: "status:open AND agent_id:0 AND priority:4"
    %s
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}: {{ ticket.subject }}", mention: "@it-oncall"}
      - note: "Alerted the on-call."
`

func stormEnv(t *testing.T, settings string, grouping bool, opts ...Option) *env {
	t.Helper()
	return newEnvNotifier(t, nil, grouping, fmt.Sprintf(stormRules, settings), opts...)
}

func addUrgent(e *env, n int) []int64 {
	var ids []int64
	for i := range n {
		ids = append(ids, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Outage %d", i), Priority: 4}).ID)
	}
	return ids
}

// wantFiringsDone checks that the ledger shows every ticket's firing of
// rule done with its actions 0..n-1.
func wantFiringsDone(t *testing.T, st *store.Store, rule string, ids []int64, n int) {
	t.Helper()
	var all []int
	for i := range n {
		all = append(all, i)
	}
	for _, id := range ids {
		info, ok, err := st.FiringState(t.Context(), rules.FiringKey{Rule: rule, TicketID: id})
		if err != nil || !ok || info.State != rules.FiringDone || !slices.Equal(info.Done, all) {
			t.Errorf("ticket #%d: firing %+v (found %v, %v), want done with actions %v", id, info, ok, err, all)
		}
	}
}

// TestGroupedAlertNamesEveryTicketOnce: a cycle alerting about more
// tickets than group_over posts one message naming them all, with every
// firing's key; each firing goes on with its note and is recorded done.
// The next cycles post nothing.
func TestGroupedAlertNamesEveryTicketOnce(t *testing.T) {
	e := stormEnv(t, "", true)
	ids := addUrgent(e, 8)
	for range 3 {
		e.runOnce()
		e.clk.Advance(time.Minute)
	}
	gs := e.notif.groupList()
	if len(gs) != 1 || len(e.notif.list()) != 0 {
		t.Fatalf("%d groups and %d single alerts, want one group", len(gs), len(e.notif.list()))
	}
	g := gs[0]
	if g.Channel != "#it-oncall" || g.Rule != "urgent" || len(g.Alerts) != 8 {
		t.Fatalf("group %s %s with %d alerts, want #it-oncall urgent with 8", g.Channel, g.Rule, len(g.Alerts))
	}
	for i, a := range g.Alerts {
		wantKey := fmt.Sprintf("deskbot:f=urgent/%d/1.1/0", ids[i])
		if a.Ticket.ID != ids[i] || a.Key != wantKey || a.Text != fmt.Sprintf("Urgent #%d: Outage %d", ids[i], i) || a.Mention != "@it-oncall" {
			t.Errorf("alert %d: #%d %q %q %q, want #%d with key %s", i, a.Ticket.ID, a.Key, a.Text, a.Mention, ids[i], wantKey)
		}
	}
	for _, id := range ids {
		if n := len(e.notesWith(id, "Alerted the on-call.")); n != 1 {
			t.Errorf("ticket #%d has %d notes, want 1", id, n)
		}
	}
	wantFiringsDone(t, e.st, "urgent", ids, 2)
	if got := metricValue(t, e.s.m.Exec.AlertGroups.WithLabelValues("urgent")); got != 1 {
		t.Errorf("alert groups metric %v, want 1", got)
	}
}

// TestGroupOverThreshold: up to group_over tickets get a card each; one
// more makes a group; group_over is per rule.
func TestGroupOverThreshold(t *testing.T) {
	for _, tc := range []struct {
		settings       string
		tickets        int
		groups, single int
	}{
		{"", 5, 0, 5},
		{"", 6, 1, 0},
		{"group_over: 2", 3, 1, 0},
		{"group_over: 2", 2, 0, 2},
		{"group_over: 50", 30, 0, 20}, // the rule's default cap holds the other 10 back
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.settings, tc.tickets), func(t *testing.T) {
			e := stormEnv(t, tc.settings, true)
			addUrgent(e, tc.tickets)
			e.runOnce()
			if g, s := len(e.notif.groupList()), len(e.notif.list()); g != tc.groups || s != tc.single {
				t.Errorf("%d groups and %d single alerts, want %d and %d", g, s, tc.groups, tc.single)
			}
		})
	}
}

// TestWithoutGroupNotifierAlertsOneByOne: a notifier that cannot group
// gets one alert per ticket.
func TestWithoutGroupNotifierAlertsOneByOne(t *testing.T) {
	e := stormEnv(t, "", false)
	addUrgent(e, 9)
	e.runOnce()
	if n := len(e.notif.list()); n != 9 {
		t.Fatalf("%d alerts, want 9", n)
	}
}

// TestPerRuleCapDrainsOverCycles: a rule fires on at most its
// max_firings_per_cycle tickets a cycle; the rest are neither claimed nor
// lost, are counted and shown by the explainer, and fire in the next
// cycles, each exactly once.
func TestPerRuleCapDrainsOverCycles(t *testing.T) {
	e := stormEnv(t, "max_firings_per_cycle: 12", true)
	ids := addUrgent(e, 30)
	var fired, held []int
	for range 4 {
		res := e.runOnce()
		fired, held = append(fired, res[0].Fired), append(held, res[0].HeldBack)
		if len(fired) == 1 {
			// After the first cycle: ticket 13 on waits, and says why.
			h, ok := e.s.Memory().Held.HeldBack(rules.FiringKey{Rule: "urgent", TicketID: ids[12]})
			if !ok || h.Cap != plan.CapRule || h.Limit != 12 || !h.At.Equal(t0) {
				t.Errorf("HeldBack(#%d) = %+v %v, want the rule's cap of 12 at %s", ids[12], h, ok, t0)
			}
			if _, ok := e.s.Memory().Held.HeldBack(rules.FiringKey{Rule: "urgent", TicketID: ids[11]}); ok {
				t.Errorf("ticket #%d fired but is said to be held back", ids[11])
			}
			if _, found, _ := e.st.FiringState(t.Context(), rules.FiringKey{Rule: "urgent", TicketID: ids[12]}); found {
				t.Errorf("ticket #%d was claimed though held back", ids[12])
			}
			ex := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return e.s.set }, e.st, e.clk.Now, firing.ExplainHeldBack(e.s.Memory().Held))
			out, err := ex.Explain(t.Context(), ids[12])
			want := "urgent: never fired; can fire on the next poll where it holds; held back by the rule's max_firings_per_cycle (12) in the cycle of " + t0.Format(time.RFC3339) + "; fires in a later cycle"
			if err != nil || !strings.Contains(out, want) {
				t.Errorf("explanation (%v):\n%s\nwant a line %q", err, out, want)
			}
		}
		e.clk.Advance(time.Minute)
	}
	if !slices.Equal(fired, []int{12, 12, 6, 0}) || !slices.Equal(held, []int{18, 6, 0, 0}) {
		t.Errorf("fired %v held back %v per cycle, want [12 12 6 0] and [18 6 0 0]", fired, held)
	}
	if got := metricValue(t, e.s.m.DeferredByCap.WithLabelValues("urgent")); got != 24 {
		t.Errorf("deferred_by_cap metric %v, want 18+6", got)
	}
	if _, ok := e.s.Memory().Held.HeldBack(rules.FiringKey{Rule: "urgent", TicketID: ids[29]}); ok {
		t.Errorf("ticket #%d still said to be held back after it fired", ids[29])
	}
	named := e.notif.named("urgent")
	for _, id := range ids {
		if named[id] != 1 {
			t.Errorf("ticket #%d named in %d messages, want 1", id, named[id])
		}
	}
	if n := e.notif.messages(); n != 3 { // groups of 12, 12, then 6 (over 5)
		t.Errorf("%d messages, want 3 groups", n)
	}
	wantFiringsDone(t, e.st, "urgent", ids, 2)
}

// TestCycleCapAcrossRules: the bound across rules holds back the firings
// of the rules that come after it, per ticket order; all fire in the end.
func TestCycleCapAcrossRules(t *testing.T) {
	e := newGroupEnv(t, testkit.NoteRules("first", "second"), WithMaxFiringsPerCycle(7))
	ids := addUrgent(e, 6)
	var fired []int
	for range 3 {
		res := e.runOnce()
		n := 0
		for _, r := range res {
			n += r.Fired
		}
		fired = append(fired, n)
		e.clk.Advance(time.Minute)
	}
	if !slices.Equal(fired, []int{7, 5, 0}) {
		t.Errorf("fired %v per cycle, want [7 5 0]", fired)
	}
	for _, id := range ids {
		if a, b := len(e.notesWith(id, "first")), len(e.notesWith(id, "second")); a != 1 || b != 1 {
			t.Errorf("ticket #%d: notes %d of rule first, %d of rule second; want one each", id, a, b)
		}
	}
	if _, err := New(testLogger(t), firing.ClientDesk(e.client), e.s.set, e.st, nil, WithMaxFiringsPerCycle(-1)); err == nil {
		t.Error("New accepted a negative cap")
	}
}

// TestHeldBackRuleIsDueAtTheNextTick: a rule polled every 5 minutes whose
// cap held tickets back runs again at the next tick (a minute: another
// rule's interval), not 5 minutes later.
func TestHeldBackRuleIsDueAtTheNextTick(t *testing.T) {
	e := newGroupEnv(t, `version: 1
rules:
  - name: urgent
    query: "status:open AND agent_id:0 AND priority:4"
    every: 5m
    max_firings_per_cycle: 3
    actions: [{note: "Alerted the on-call."}]
  - name: low
    query: "status:open AND priority:1"
    every: 1m
    actions: [{note: "low"}]
`)
	addUrgent(e, 7)
	// The first cycle builds the mirror (a scheduled one leaves that to
	// the background).
	fired := []int{e.runOnce()[0].Fired}
	if tick := e.s.tickEvery(); tick != time.Minute {
		t.Fatalf("tick %v, want a minute", tick)
	}
	e.clk.Advance(time.Minute)
	e.s.baseCtx = t.Context()
	for range 3 {
		c := e.s.runCycle(t.Context(), scheduled)
		n := 0
		for _, r := range c.Jobs {
			if r.Job == "urgent" {
				n += r.Fired
			}
		}
		fired = append(fired, n)
		e.clk.Advance(time.Minute)
	}
	if !slices.Equal(fired, []int{3, 3, 1, 0}) {
		t.Errorf("fired %v in the scheduled cycles a minute apart, want [3 3 1 0]", fired)
	}
}

// TestGroupLostAnswerResumesWithoutRepost: the group message was posted
// but its answer was lost. Every firing stays pending (none is recorded
// as done on a maybe); after the lease each resumed firing finds its key
// in the posted message, records the alert as done and writes its note:
// no second message, no ticket lost.
func TestGroupLostAnswerResumesWithoutRepost(t *testing.T) {
	e := stormEnv(t, "", true)
	e.notif.loseGroups = 1
	ids := addUrgent(e, 7)
	e.runOnce()
	for _, id := range ids {
		info, _, _ := e.st.FiringState(t.Context(), rules.FiringKey{Rule: "urgent", TicketID: id})
		if info.State != rules.FiringPending || len(info.Done) != 0 {
			t.Fatalf("after the lost answer, ticket #%d: %+v, want pending with nothing done", id, info)
		}
	}
	e.clk.Advance(time.Minute) // within the lease: nothing
	e.runOnce()
	e.clk.Advance(DefaultLease)
	res := e.runOnce()
	if res[0].Fired != 7 {
		t.Errorf("resume fired %d, want 7", res[0].Fired)
	}
	gs := e.notif.groupList()
	if len(gs) != 1 || len(e.notif.list()) != 0 || len(gs[0].Alerts) != 7 {
		t.Fatalf("%d groups, %d single alerts; want the one group of 7", len(gs), len(e.notif.list()))
	}
	for _, id := range ids {
		if n := len(e.notesWith(id, "Alerted the on-call.")); n != 1 {
			t.Errorf("ticket #%d has %d notes, want 1", id, n)
		}
	}
	wantFiringsDone(t, e.st, "urgent", ids, 2)
}

// TestGroupRefusedIsRetried: a group the chat refused (certainly not
// posted) releases every firing; the next cycle posts it.
func TestGroupRefusedIsRetried(t *testing.T) {
	e := stormEnv(t, "", true)
	e.notif.fail = 1
	ids := addUrgent(e, 6)
	e.runOnce()
	if len(e.notif.groupList()) != 0 {
		t.Fatal("the refused group was recorded")
	}
	e.clk.Advance(firing.RetryBase)
	e.runOnce()
	if gs := e.notif.groupList(); len(gs) != 1 || len(gs[0].Alerts) != 6 {
		t.Fatalf("groups %d, want the retried one of 6", len(gs))
	}
	wantFiringsDone(t, e.st, "urgent", ids, 2)
}

// TestGroupWaitsBehindEarlierActions: the alert comes after an update and
// a note; the group is posted after every ticket's earlier actions, and the
// later ones follow it.
func TestGroupWaitsBehindEarlierActions(t *testing.T) {
	e := newGroupEnv(t, `version: 1
rules:
  - name: overdue
    query: "status:open AND priority:4"
    actions:
      - set: {tags: [overdue]}
      - note: "before"
      - alert: {channel: "#desk", text: "Overdue #{{ ticket.id }}: {{ ticket.subject }}"}
      - note: "after"
`)
	ids := addUrgent(e, 6)
	e.runOnce()
	gs := e.notif.groupList()
	if len(gs) != 1 || len(gs[0].Alerts) != 6 {
		t.Fatalf("%d groups, want one of 6", len(gs))
	}
	for _, a := range gs[0].Alerts {
		if !slices.Contains(a.Ticket.Tags, "overdue") {
			t.Errorf("ticket #%d in the group without the tag its update set first: %v", a.Ticket.ID, a.Ticket.Tags)
		}
	}
	for _, id := range ids {
		if len(e.notesWith(id, "before")) != 1 || len(e.notesWith(id, "after")) != 1 {
			t.Errorf("ticket #%d: notes before %d, after %d; want one each", id, len(e.notesWith(id, "before")), len(e.notesWith(id, "after")))
		}
	}
	wantFiringsDone(t, e.st, "overdue", ids, 4)
}

// BenchmarkGroupedCycle is a cycle that fires a rule on 200 tickets (once
// every second, so every cycle fires them all again) with grouping: one
// re-read, claim, alert and note per ticket, and one message for the 200
// alerts.
func BenchmarkGroupedCycle(b *testing.B) {
	clk, sim := testkit.FakeDesk(b, t0)
	for i := range 200 {
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Outage %d", i), Priority: 4})
	}
	st, err := store.Open(b.Context(), ":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	notif := &recNotifier{}
	set := mustRules(b, fmt.Sprintf(stormRules, "once: every 1s\n    max_firings_per_cycle: 1000"))
	s, err := New(testLogger(b), firing.ClientDesk(testkit.DeskClient(b, sim)), set, st, groupNotifier{notif}, WithClock(clk),
		WithRegistry(prometheus.NewRegistry()), WithMaxFiringsPerCycle(0))
	if err != nil {
		b.Fatal(err)
	}
	fired := 0
	for b.Loop() {
		clk.Advance(time.Minute)
		res, err := s.RunOnce(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		fired += res[0].Fired
	}
	b.ReportMetric(float64(fired)/float64(b.N), "firings/cycle")
	b.ReportMetric(float64(notif.messages())/float64(b.N), "messages/cycle")
}
