package scheduler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/prometheus/client_golang/prometheus"
)

const urgentRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: page-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    max_firings_per_cycle: 100 # tests of the caps: storm_test.go
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}: {{ ticket.subject }}"}
      - note: "Paged on-call."
`

func TestUrgentUnassignedAlertsOnceOverManyCycles(t *testing.T) {
	e := newEnv(t, urgentRules)
	urgent := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4})
	low := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mouse", Priority: 1})
	for i := range 10 {
		res := e.runOnce()
		if !allComplete(res) {
			t.Fatalf("cycle %d incomplete: %+v", i, res)
		}
		e.clk.Advance(time.Minute)
	}
	if got := e.notif.forTicket(urgent.ID); len(got) != 1 {
		t.Fatalf("urgent ticket: %d alerts over 10 cycles, want exactly 1: %+v", len(got), got)
	}
	if got := e.notif.forTicket(low.ID); len(got) != 0 {
		t.Errorf("low ticket alerted: %+v", got)
	}
	if a := e.notif.list()[0]; a.Channel != "#it-oncall" || a.Text != fmt.Sprintf("Urgent #%d: Mail down", urgent.ID) || a.Rule != "page-urgent" ||
		a.Key != fmt.Sprintf("deskbot:f=page-urgent/%d/1.1/0", urgent.ID) {
		t.Errorf("alert = %+v", a)
	}
	notes := e.notesWith(urgent.ID, "Paged on-call.")
	if len(notes) != 1 || !notes[0].Private || !strings.Contains(notes[0].Body, fmt.Sprintf("<!-- deskbot:f=page-urgent/%d/1.1/1 -->", urgent.ID)) {
		t.Fatalf("notes = %+v, want one private note with its marker", notes)
	}
	if got := metricValue(t, e.s.m.Exec.Decisions.WithLabelValues("page-urgent", "fired")); got != 1 {
		t.Errorf("fired decisions metric = %v, want 1", got)
	}
	if got := metricValue(t, e.s.m.cycles.WithLabelValues("page-urgent", "complete")); got != 10 {
		t.Errorf("complete cycles metric = %v, want 10", got)
	}
	if got := metricValue(t, e.s.m.lastComplete.WithLabelValues("page-urgent")); got != float64(t0.Add(9*time.Minute).Unix()) {
		t.Errorf("last complete cycle metric = %v, want the tenth cycle's start", got)
	}
	if r := e.s.Ready(); len(r.Jobs) != 1 || !r.Jobs[0].LastComplete.Equal(t0.Add(9*time.Minute)) {
		t.Errorf("Ready = %+v", r)
	}
}

func TestCustomOpenStatusOverdueFiresResolvedDoesNot(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: overdue
    query: "status:open"
    if: has_due(ticket) && ticket.due_by < now()
    every: 5m
    actions:
      - set: {priority: 4, tags: [overdue]}
      - note: "Overdue."
`)
	e.sim.Desk.AddStatus(7, "Waiting on vendor")
	past := t0.Add(-time.Hour)
	custom := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "vendor", Status: 7, DueBy: past})
	resolved := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "done", Status: 4, DueBy: past})
	future := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "later", Status: 2, DueBy: t0.Add(time.Hour)})
	if res := e.runOnce(); !allComplete(res) {
		t.Fatalf("incomplete: %+v", res)
	}
	filterQuery := e.lastFilterQuery()
	if !strings.Contains(filterQuery, "status:7") {
		t.Errorf("filter query %q does not include the custom open status 7", filterQuery)
	}
	if n := len(e.notesWith(custom.ID, "Overdue.")); n != 1 {
		t.Errorf("ticket in custom status: %d notes, want 1", n)
	}
	got, _ := e.sim.Desk.Ticket(custom.ID)
	if got.Priority != 4 || len(got.Tags) != 1 || got.Tags[0] != "overdue" {
		t.Errorf("custom-status ticket after update: priority %d tags %v", got.Priority, got.Tags)
	}
	if n := len(e.sim.Desk.Conversations(resolved.ID)); n != 0 {
		t.Errorf("resolved ticket got %d conversations", n)
	}
	if n := len(e.sim.Desk.Conversations(future.ID)); n != 0 {
		t.Errorf("not-yet-due ticket got %d conversations", n)
	}
}

func TestUnknownStatusTriggersStatusRefresh(t *testing.T) {
	e := newEnv(t, testkit.NoteRules("unassigned"))
	e.runOnce()
	if got := e.s.feed.KnownStatuses(); len(got) != 2 {
		t.Fatalf("open statuses = %v, want [2 3]", got)
	}
	e.sim.Desk.AddStatus(9, "Scheduled")
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "s", Status: 9})
	e.runOnce() // sees status 9: marks the statuses stale
	e.runOnce() // re-reads them
	if got := e.s.feed.KnownStatuses(); len(got) != 3 || got[2] != 9 {
		t.Fatalf("open statuses = %v, want 9 among them after a ticket showed it", got)
	}
}

// TestOpenStatusesRefreshPeriodically: a custom status added on the desk
// joins status:open once the refresh interval has passed, without a ticket
// having to show it first, and not before.
func TestOpenStatusesRefreshPeriodically(t *testing.T) {
	e := newEnv(t, urgentRules, WithFeed(feed.WithStatusRefresh(10*time.Minute), feed.WithFullSyncEvery(10*time.Minute)))
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4})
	e.runOnce()
	e.sim.Desk.AddStatus(8, "Awaiting parts")
	e.sim.Desk.UpdateTicket(tk.ID, func(x *sdsim.Ticket) { x.Status = 8 })
	e.clk.Advance(9 * time.Minute)
	e.runOnce()
	if got := e.s.feed.KnownStatuses(); slices.Contains(got, 8) {
		t.Fatalf("open statuses %v re-read before the refresh interval", got)
	}
	e.clk.Advance(2 * time.Minute)
	e.sim.Desk.ResetRequests()
	e.runOnce()
	if got := e.s.feed.KnownStatuses(); !slices.Contains(got, 8) {
		t.Fatalf("open statuses %v after the refresh interval, want 8 among them", got)
	}
	filterQuery := e.lastFilterQuery()
	if !strings.Contains(filterQuery, "status:8") {
		t.Errorf("the full sync's filter query %q does not read the new open status", filterQuery)
	}
}

// firedOnVPN is a desk with one urgent ticket, VPN, that the cycle of
// urgentRules fired on, a minute later.
func firedOnVPN(t *testing.T) (*env, sdsim.Ticket) {
	t.Helper()
	e := newEnv(t, urgentRules)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4})
	e.runOnce()
	e.clk.Advance(time.Minute)
	return e, tk
}

func TestSecondEpisodeAfterCompletePollWithoutMatch(t *testing.T) {
	e, tk := firedOnVPN(t)
	// Assigned: the next complete poll does not match it and ends the episode.
	e.assign(tk.ID, sdsim.DefaultAgentID)
	res := e.runOnce()
	if !allComplete(res) || res[0].Ended != 1 {
		t.Fatalf("cycle after assignment: %+v, want complete with 1 episode ended", res)
	}
	e.clk.Advance(time.Minute)
	e.assign(tk.ID, 0)
	e.runOnce()
	e.next()
	alerts := e.notif.forTicket(tk.ID)
	if len(alerts) != 2 {
		t.Fatalf("%d alerts, want 2 (one per episode): %+v", len(alerts), alerts)
	}
	if !strings.Contains(alerts[1].Key, "/2.1/") {
		t.Errorf("second alert key %q, want episode 2", alerts[1].Key)
	}
	if n := len(e.notesWith(tk.ID, "Paged on-call.")); n != 2 {
		t.Errorf("%d notes, want 2", n)
	}
}

func TestIncompleteCycleDoesNotEndEpisodes(t *testing.T) {
	e, tk := firedOnVPN(t)
	e.assign(tk.ID, sdsim.DefaultAgentID)
	// Every attempt of this cycle's change feed fails (the client tries
	// twice), so the mirror cannot know of the assignment.
	e.sim.Desk.InjectFault(sdsim.Fault{Kind: sdsim.FaultServerError, Count: 2, Method: "GET", PathPrefix: "/api/v2/tickets"})
	res := e.runOnce()
	if allComplete(res) || res[0].Ended != 0 || res[0].Err == nil {
		t.Fatalf("cycle with a failing change feed: %+v, want incomplete, nothing ended", res)
	}
	if got := metricValue(t, e.s.m.cycles.WithLabelValues("page-urgent", "incomplete")); got != 1 {
		t.Errorf("incomplete cycles metric = %v", got)
	}
	e.assign(tk.ID, 0)
	for range 3 {
		e.next()
	}
	if n := len(e.notif.forTicket(tk.ID)); n != 1 {
		t.Fatalf("%d alerts, want 1: the incomplete poll must not have ended the episode", n)
	}
}

func TestFaultsMidCycleLoseAndDuplicateNothing(t *testing.T) {
	e := newEnv(t, urgentRules)
	var ids []int64
	for i := range 70 { // three filter pages of 30
		ids = append(ids, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 4}).ID)
	}
	faults := []sdsim.Fault{
		{Kind: sdsim.FaultRateLimit, Count: 2, PathPrefix: "/api/v2/tickets/filter", RetryAfter: 1},
		{Kind: sdsim.FaultServerError, Count: 3, Method: "POST", PathPrefix: "/api/v2/tickets/"},
		{Kind: sdsim.FaultRateLimit, Count: 2, Method: "GET", PathPrefix: "/api/v2/tickets/1"},
		{Kind: sdsim.FaultServerError, Count: 1, Method: "POST", PathPrefix: "/api/v2/tickets/"},
	}
	sawIncomplete := false
	for i := range 12 {
		if i < len(faults) {
			e.sim.Desk.InjectFault(faults[i])
		}
		if i == 1 {
			e.notif.mu.Lock()
			e.notif.fail = 2
			e.notif.mu.Unlock()
		}
		res := e.runOnce()
		if !allComplete(res) {
			sawIncomplete = true
			if res[0].Ended != 0 {
				t.Errorf("incomplete cycle ended %d episodes", res[0].Ended)
			}
		}
		e.clk.Advance(time.Minute)
	}
	if !sawIncomplete {
		t.Error("no cycle was incomplete: the 429s on filter did not bite")
	}
	for _, id := range ids {
		if n := len(e.notif.forTicket(id)); n != 1 {
			t.Errorf("ticket %d: %d alerts, want exactly 1", id, n)
		}
		if n := len(e.notesWith(id, "Paged on-call.")); n != 1 {
			t.Errorf("ticket %d: %d notes, want exactly 1", id, n)
		}
	}
	if t.Failed() {
		for _, r := range e.sim.Desk.Requests() {
			if r.Fault != 0 {
				t.Logf("fault %v on %s %s", r.Fault, r.Method, r.Path)
			}
		}
	}
}

// hookDesk runs afterList after each change feed read: another writer
// changes the desk between the sync and the actions.
type hookDesk struct {
	firing.Desk
	afterList func()
}

func (d *hookDesk) ListTickets(ctx context.Context, opts *sdclient.TicketListOptions) ([]*sdclient.Ticket, *sdclient.Response, error) {
	l, resp, err := d.Desk.ListTickets(ctx, opts)
	if d.afterList != nil && opts.Filter == "" {
		d.afterList()
	}
	return l, resp, err
}

func TestReReadSkipsTicketThatNoLongerMatches(t *testing.T) {
	e := newEnv(t, urgentRules)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4})
	d := &hookDesk{Desk: firing.ClientDesk(e.client)}
	d.afterList = func() {
		e.assign(tk.ID, sdsim.DefaultAgentID)
	}
	s := e.another(d, urgentRules, e.st, e.notif, WithRegistry(prometheus.NewRegistry()))
	res, err := s.RunOnce(t.Context()) // the mirror still says unassigned
	if err != nil || res[0].Decisions != 1 || res[0].Fired != 0 {
		t.Fatalf("result %+v %v: want 1 decision from the mirror, nothing fired", res, err)
	}
	if n := len(e.notif.list()); n != 0 {
		t.Errorf("%d alerts for a ticket the re-read showed assigned", n)
	}
	if got := metricValue(t, s.m.Exec.Decisions.WithLabelValues("page-urgent", "stale")); got != 1 {
		t.Errorf("stale decisions = %v", got)
	}
	// The re-read refreshed the mirror: the next cycle decides nothing.
	d.afterList = nil
	e.clk.Advance(time.Minute)
	if res, err := s.RunOnce(t.Context()); err != nil || res[0].Decisions != 0 {
		t.Errorf("next cycle %+v %v, want no decision", res, err)
	}
}

func TestRulesSharingAQueryShareItsRequests(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: a
    query: "status:open AND priority:4"
    actions: [{note: "a"}]
  - name: b
    query: "status:open AND priority:4"
    if: ticket.subject == "x"
    actions: [{note: "b"}]
  - name: c
    query: "priority:1"
    actions: [{note: "c"}]
`)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4})
	res := e.runOnce()
	if len(res) != 2 {
		t.Fatalf("%d jobs, want 2 (a and b share a query)", len(res))
	}
	if res[0].Job != "a+1" || strings.Join(res[0].Rules, ",") != "a,b" {
		t.Errorf("job %q rules %v", res[0].Job, res[0].Rules)
	}
	gets := 0
	for _, r := range e.sim.Desk.Requests() {
		if r.Method == "GET" && r.Path == fmt.Sprintf("/api/v2/tickets/%d", tk.ID) {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("ticket re-read %d times, want once although two rules fired", gets)
	}
	if len(e.notesWith(tk.ID, "a")) != 1 || len(e.notesWith(tk.ID, "b\n")) != 1 {
		t.Errorf("notes: %+v", e.sim.Desk.Conversations(tk.ID))
	}
}

func TestCascadeIsDeferred(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: escalate
    query: "status:open"
    if: ticket.subject == "slow"
    actions: [{set: {priority: 4}}]
  - name: urgent
    query: "status:open"
    if: ticket.priority == Urgent
    actions: [{note: "urgent now"}]
`)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "slow", Priority: 1})
	e.runOnce()
	if n := len(e.notesWith(tk.ID, "urgent now")); n != 0 {
		t.Fatalf("the cascade fired in the same cycle")
	}
	if got := metricValue(t, e.s.m.Exec.Cascades.WithLabelValues("urgent")); got != 1 {
		t.Errorf("cascade metric = %v, want 1", got)
	}
	e.next()
	if n := len(e.notesWith(tk.ID, "urgent now")); n != 1 {
		t.Fatalf("next cycle: %d notes, want 1", n)
	}
}

func TestAssignByEmail(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: route
    query: "agent_id:0"
    actions: [{assign: "ada.admin@sim.deskbot.test"}]
`)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x"})
	e.runOnce()
	got, _ := e.sim.Desk.Ticket(tk.ID)
	if got.ResponderID != sdsim.DefaultAgentID {
		t.Fatalf("responder = %d, want %d", got.ResponderID, sdsim.DefaultAgentID)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	e := newEnv(t, urgentRules, WithDryRun(true))
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4})
	e.runOnce()
	e.runOnce()
	if len(e.notif.list()) != 0 || len(e.sim.Desk.Conversations(tk.ID)) != 0 {
		t.Fatal("dry run acted")
	}
	if _, found, _ := e.st.FiringState(t.Context(), rules.FiringKey{Rule: "page-urgent", TicketID: tk.ID}); found {
		t.Error("dry run wrote the ledger")
	}
	// The second cycle remembers what the first would have fired (see
	// dryrun.go) and does not say it again.
	if got := metricValue(t, e.s.m.Exec.Decisions.WithLabelValues("page-urgent", "dry_run")); got != 1 {
		t.Errorf("dry_run decisions = %v, want 1", got)
	}
}

func TestWorkspacesArePolledEach(t *testing.T) {
	e := newEnv(t, urgentRules, WithFeed(feed.WithWorkspaces(sdsim.DefaultWorkspaceID, 3)))
	e.sim.Desk.AddWorkspace(sdsim.Workspace{ID: 3, Name: "HR"})
	a := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "it", Priority: 4})
	b := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "hr", Priority: 4, WorkspaceID: 3})
	if res := e.runOnce(); !allComplete(res) {
		t.Fatalf("%+v", res)
	}
	if len(e.notif.forTicket(a.ID)) != 1 || len(e.notif.forTicket(b.ID)) != 1 {
		t.Fatalf("alerts %+v, want one per ticket in both workspaces", e.notif.list())
	}
}

func TestQueryTooLongAfterExpansionRefusedAtStart(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: short-one
    query: "priority:4"
    actions: [{note: "x"}]
  - name: long-one
    query: "status:open AND agent_id:0"
    actions: [{note: "x"}]
`)
	for id := 10; id < 110; id++ {
		e.sim.Desk.AddStatus(id, fmt.Sprintf("custom %d", id))
	}
	err := e.s.Start(t.Context())
	if err == nil {
		e.s.Stop(t.Context())
		t.Fatal("Start accepted a query longer than 512 characters after expansion")
	}
	if !strings.Contains(err.Error(), `"long-one"`) || strings.Contains(err.Error(), "short-one") {
		t.Fatalf("error %q should name the long rule only", err)
	}
}

func TestReloadSwapsRules(t *testing.T) {
	e := newEnv(t, urgentRules)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 1})
	e.runOnce()
	if err := e.s.Reload(mustRules(t, `version: 1
rules:
  - name: low
    query: "priority:1"
    actions: [{note: "low"}]
`)); err != nil {
		t.Fatal(err)
	}
	res := e.runOnce()
	if len(res) != 1 || res[0].Job != "low" {
		t.Fatalf("after reload: %+v", res)
	}
	if n := len(e.notesWith(tk.ID, "low")); n != 1 {
		t.Errorf("%d notes from the reloaded rule", n)
	}
}

func TestSetTagsAddsToTheTicketsTags(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: tag-urgent
    query: "priority:4"
    actions: [{set: {tags: [escalated, VIP]}}]
`)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4, Tags: []string{"vip", "network"}})
	e.runOnce()
	got, _ := e.sim.Desk.Ticket(tk.ID)
	if want := []string{"vip", "network", "escalated"}; !slices.Equal(got.Tags, want) {
		t.Fatalf("tags = %q, want %q: a rule's tags must add to the ticket's, not replace them", got.Tags, want)
	}
}

// TestJobPerQueryAndInterval: rules with the same query and interval share
// one job; the same query at another interval is a job of its own, polled
// at its own pace; every job sends one filter search per workspace.
func TestJobPerQueryAndInterval(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: fast-a
    query: "status:open AND priority:4"
    every: 1m
    actions: [{note: "a"}]
  - name: slow
    query: "status:open AND priority:4"
    every: 5m
    actions: [{note: "slow"}]
  - name: fast-b
    query: "status:open AND priority:4"
    every: 1m
    actions: [{note: "b"}]
`, WithFeed(feed.WithWorkspaces(sdsim.DefaultWorkspaceID, 3)))
	e.sim.Desk.AddWorkspace(sdsim.Workspace{ID: 3, Name: "HR"})
	it := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "it", Priority: 4})
	hr := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "hr", Priority: 4, WorkspaceID: 3})
	e.sim.Desk.ResetRequests()
	res := e.runOnce()
	if len(res) != 2 || res[0].Job != "fast-a+1" || strings.Join(res[0].Rules, ",") != "fast-a,fast-b" ||
		res[1].Job != "slow" || strings.Join(res[1].Rules, ",") != "slow" {
		t.Fatalf("jobs %+v, want fast-a+1 (fast-a, fast-b) and slow", res)
	}
	feeds := map[string]int{}
	for _, r := range e.sim.Desk.Requests() {
		q, _ := url.ParseQuery(r.RawQuery)
		if r.Path == "/api/v2/tickets" && q.Get("filter") == "" {
			feeds[q.Get("workspace_id")]++
		}
	}
	want := map[string]int{fmt.Sprint(sdsim.DefaultWorkspaceID): 1, "3": 1}
	if fmt.Sprint(feeds) != fmt.Sprint(want) {
		t.Errorf("change feed requests by workspace %v, want %v (one per workspace, shared by the jobs)", feeds, want)
	}
	for _, id := range []int64{it.ID, hr.ID} {
		for _, note := range []string{"a\n", "b\n", "slow\n"} {
			if n := len(e.notesWith(id, note)); n != 1 {
				t.Errorf("ticket %d: %d notes %q, want 1", id, n, note)
			}
		}
	}

	// Scheduled: each job at its own interval.
	if err := e.s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.s.Stop(context.Background()) })
	eventually(t, "the first scheduled cycles", 20*time.Second, func() bool {
		for _, j := range e.s.Ready().Jobs {
			if j.LastComplete.IsZero() {
				return false
			}
		}
		return true
	})
	next := map[string]time.Duration{}
	for _, j := range e.s.jobs {
		next[j.name] = j.Next().Sub(t0)
	}
	if next["fast-a+1"] != time.Minute || next["slow"] != 5*time.Minute {
		t.Errorf("next runs after start %v, want fast-a+1 in 1m and slow in 5m", next)
	}
	if tick := e.s.tickEvery(); tick != time.Minute {
		t.Errorf("the cycle ticks every %v, want 1m (the gcd of 1m and 5m)", tick)
	}
}

// shiftDesk runs hook once, right after the first filter page of a full
// sync has been read: the desk's result changes under the paging.
type shiftDesk struct {
	firing.Desk
	hook func()
}

func (d *shiftDesk) FilterTickets(ctx context.Context, query string, opts *sdclient.FilterOptions) (*sdclient.FilterPage, *sdclient.Response, error) {
	p, resp, err := d.Desk.FilterTickets(ctx, query, opts)
	if opts.Page == 1 && d.hook != nil {
		d.hook()
		d.hook = nil
	}
	return p, resp, err
}

// TestFullSyncShiftEndsNoEpisodeAndLosesNoTicket: during a periodic full
// sync, between two page reads one ticket leaves the result and another
// enters it further down, so the total holds and no ticket comes twice,
// yet the ticket at the page boundary moves onto the page already read
// and is never seen. The full sync must not drop it from the mirror (it
// re-reads what it missed), so its episode stays open and on-call is not
// paged for it a second time; the change feed brings the two changes.
func TestFullSyncShiftEndsNoEpisodeAndLosesNoTicket(t *testing.T) {
	e := newEnv(t, urgentRules)
	var ids []int64
	for i := range 35 { // two filter pages of 30, newest first
		ids = append(ids, e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 4}).ID)
	}
	// Older than all of them: once urgent, it sorts last, on page 2.
	old := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "old", Priority: 1, CreatedAt: t0.Add(-time.Hour)}).ID
	d := &shiftDesk{Desk: firing.ClientDesk(e.client)}
	s := e.another(d, urgentRules, e.st, e.notif, WithFeed(feed.WithFullSyncEvery(time.Minute)))
	if res, err := s.RunOnce(t.Context()); err != nil || !allComplete(res) || res[0].Fired != 35 {
		t.Fatalf("first cycle: %+v %v, want 35 fired", res, err)
	}
	var skipped int64
	d.hook = func() {
		p, _, err := e.client.Tickets.Filter(t.Context(), "priority:4 AND agent_id:0", nil)
		if err != nil || len(p.Tickets) < 30 {
			t.Errorf("peek at page 1: %v", err)
			return
		}
		p2, _, err := e.client.Tickets.Filter(t.Context(), "priority:4 AND agent_id:0", &sdclient.FilterOptions{Page: 2})
		if err != nil || len(p2.Tickets) == 0 {
			t.Errorf("peek at page 2: %v", err)
			return
		}
		skipped = p2.Tickets[0].ID // moves up onto page 1
		e.sim.Desk.UpdateTicket(p.Tickets[0].ID, func(x *sdsim.Ticket) { x.ResponderID = sdsim.DefaultAgentID })
		e.sim.Desk.UpdateTicket(old, func(x *sdsim.Ticket) { x.Priority = 4 })
	}
	var ended, fired []int
	for range 3 {
		e.clk.Advance(time.Minute)
		res, err := s.RunOnce(t.Context())
		if err != nil || !allComplete(res) {
			t.Fatalf("cycle: %+v %v", res, err)
		}
		ended, fired = append(ended, res[0].Ended), append(fired, res[0].Fired)
	}
	if skipped == 0 {
		t.Fatal("the hook never ran")
	}
	// Cycle 2's feed sees the assignment (its episode ends) and the old
	// ticket turning urgent (it fires); the skipped one stays as it was.
	if !slices.Equal(ended, []int{1, 0, 0}) || !slices.Equal(fired, []int{1, 0, 0}) {
		t.Errorf("episodes ended per cycle %v, fired %v; want [1 0 0] and [1 0 0]", ended, fired)
	}
	for _, id := range append(ids, old) {
		if n := len(e.notif.forTicket(id)); n != 1 {
			t.Errorf("ticket %d: %d alerts, want 1 (skipped: %d)", id, n, skipped)
		}
	}
	if r := s.Ready(); len(r.Mirror) != 1 || r.Mirror[0].Tickets != 36 {
		t.Errorf("mirror %+v, want the 36 open tickets", r.Mirror)
	}
}

// TestEndChecksAreBounded: episodes of tickets the mirror does not hold
// (here: opened before the mirror existed, on tickets deleted since) end
// only after a re-read shows the ticket gone, at most WithMaxEndChecks
// re-reads a cycle; the others stay open (nothing fires twice) and end on
// later cycles.
func TestEndChecksAreBounded(t *testing.T) {
	e := newEnv(t, urgentRules)
	ids := e.addTickets(40, 4)
	if res := e.runOnce(); res[0].Fired != 40 {
		t.Fatalf("first cycle fired %d, want 40", res[0].Fired)
	}
	for _, id := range ids[:5] {
		e.sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Deleted = true })
	}
	// A scheduler with a new, empty mirror over the same ledger.
	s := e.another(firing.ClientDesk(e.client), urgentRules, e.st, e.notif, WithMaxEndChecks(2), WithFeed(feed.WithMirrorStore(feed.NewMemStore())))
	var ended, kept []int
	for range 4 {
		e.clk.Advance(time.Minute)
		res, err := s.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ended, kept = append(ended, res[0].Ended), append(kept, res[0].Kept)
	}
	if !slices.Equal(ended, []int{2, 2, 1, 0}) || !slices.Equal(kept, []int{3, 1, 0, 0}) {
		t.Errorf("ended per cycle %v, kept %v; want [2 2 1 0] and [3 1 0 0]", ended, kept)
	}
	for _, id := range ids {
		if n := len(e.notif.forTicket(id)); n != 1 {
			t.Errorf("ticket %d: %d alerts, want 1", id, n)
		}
	}
}

func TestPruneLedgerKeepsCurrentFirings(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: nag-urgent
    query: "priority:4"
    once: every 1m
    actions: [{note: "still urgent"}]
`)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4})
	for range 3 {
		e.runOnce()
		e.clk.Advance(time.Minute)
	}
	if n := len(e.notesWith(tk.ID, "still urgent")); n != 3 {
		t.Fatalf("%d notes, want 3 repeats of once: every 1m", n)
	}
	if n, err := e.s.PruneLedger(t.Context()); err != nil || n != 0 {
		t.Fatalf("pruned %d (%v) firings younger than the retention", n, err)
	}
	e.clk.Advance(DefaultRetention + time.Hour)
	n, err := e.s.PruneLedger(t.Context())
	if err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the 2 superseded repeats", n, err)
	}
	info, ok, err := e.st.FiringState(t.Context(), rules.FiringKey{Rule: "nag-urgent", TicketID: tk.ID})
	if err != nil || !ok || info.Seq != 3 || info.State != "done" {
		t.Fatalf("current firing after pruning: %+v ok=%v err=%v", info, ok, err)
	}
	if n, _ := e.s.PruneLedger(t.Context()); n != 0 {
		t.Fatalf("a second prune deleted %d more", n)
	}
}

// TestLostNoteAnswerIsNotRepeated: the desk commits a note but its answer
// is lost, so the firing resumes after its lease and must find the note
// instead of writing it again — on a desk that keeps the note's invisible
// marker and on one that sanitises it away.
func TestLostNoteAnswerIsNotRepeated(t *testing.T) {
	for _, strip := range []bool{false, true} {
		t.Run(fmt.Sprintf("comments stripped %v", strip), func(t *testing.T) {
			var simOpts []sdsim.Option
			if strip {
				simOpts = append(simOpts, sdsim.WithHTMLCommentsStripped())
			}
			e := newEnvSim(t, simOpts, urgentRules)
			id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
			e.noteFault(id, sdsim.FaultDropAfter, 0)
			// The firing is left pending by the lost answer; the desk
			// committed the note, and resuming writes no second one.
			e.resumeLostNote(t, id, lostNote{text: "Paged on-call.", fired: 0, before: 1, leases: 3, after: 1})
			if n := len(e.notif.forTicket(id)); n != 1 {
				t.Errorf("%d alerts, want exactly 1", n)
			}
			if got := metricValue(t, e.s.m.Exec.Decisions.WithLabelValues("page-urgent", "fired")); got != 1 {
				t.Errorf("fired decisions = %v, want 1 (the resumed firing finished)", got)
			}
		})
	}
}

// TestMarkerlessNoteOfAnEarlierEpisodeHidesNothing: on a desk that strips
// markers, a note of the same text from an earlier episode is not taken
// for the note of a resumed firing: that note is written, not lost.
func TestMarkerlessNoteOfAnEarlierEpisodeHidesNothing(t *testing.T) {
	e := newEnvSim(t, []sdsim.Option{sdsim.WithHTMLCommentsStripped()}, urgentRules)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	if res := e.runOnce(); res[0].Fired != 1 {
		t.Fatalf("first episode fired %d, want 1", res[0].Fired)
	}
	e.clk.Advance(10 * time.Minute)
	e.assign(id, sdsim.DefaultAgentID)
	if res := e.runOnce(); res[0].Ended != 1 {
		t.Fatalf("assigning ended %d episodes, want 1", res[0].Ended)
	}
	e.clk.Advance(10 * time.Minute)
	e.assign(id, 0)
	// The second episode's note never reaches the desk, and deskbot cannot
	// know it: the connection drops.
	e.noteFault(id, sdsim.FaultDrop, 0)
	e.runOnce()
	e.clk.Advance(DefaultLease)
	e.runOnce()
	if n := len(e.notesWith(id, "Paged on-call.")); n != 2 {
		t.Errorf("%d notes, want 2: one per episode", n)
	}
}

// TestRefusedActionBacksOff: the desk refuses a rule's update for good (an
// agent id it does not know). The firing is retried after 1, 2, 4, ...
// minutes up to an hour, not on every poll, and rules why shows why.
func TestRefusedActionBacksOff(t *testing.T) {
	const refused = `version: 1
rules:
  - name: route-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    actions:
      - assign: 99999
`
	e := newEnv(t, refused)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	puts := func() int {
		n := 0
		for _, r := range e.sim.Desk.Requests() {
			if r.Method == "PUT" && r.Path == fmt.Sprintf("/api/v2/tickets/%d", id) {
				n++
			}
		}
		return n
	}
	var at []int // minutes at which the update was tried
	for m := 0; m <= 150; m++ {
		before := puts()
		e.runOnce()
		if puts() > before {
			at = append(at, m)
		}
		e.clk.Advance(time.Minute)
	}
	if want := []int{0, 1, 3, 7, 15, 31, 63, 123}; !slices.Equal(at, want) {
		t.Errorf("the update was tried at minutes %v, want %v", at, want)
	}
	ex := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return mustRules(t, refused) }, e.st, e.clk.Now)
	out, err := ex.Explain(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "8 attempts); last attempt refused: ") || !strings.Contains(out, "There is no agent with this id") {
		t.Errorf("rules why does not say why the firing is stuck:\n%s", out)
	}
}

// TestReloadWhileCyclesRun: a reload that changes the cycle's tick while
// cycles run shares no field unguarded with them (run with -race).
func TestReloadWhileCyclesRun(t *testing.T) {
	e := newEnv(t, urgentRules)
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "x", Priority: 4})
	if err := e.s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.s.Stop(context.Background()) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			e.s.runCycle(t.Context(), scheduled)
		}
	}()
	for i := range 20 {
		every := []string{"1m", "30s"}[i%2]
		if err := e.s.Reload(mustRules(t, strings.Replace(urgentRules, "every: 1m", "every: "+every, 1))); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if got := e.s.tickEvery(); got != 30*time.Second {
		t.Errorf("tick %v after the last reload, want 30s", got)
	}
}

const peopleRules = `version: 1
rules:
  - name: network
    query: "priority:4"
    if: 'ticket.group.name == "Network" && ticket.description_text contains "switch"'
    once: every 1m
    actions:
      - note: "For {{ ticket.requester.name }} <{{ ticket.requester.email }}>, agent {{ ticket.agent.name }} ({{ ticket.agent.email }}), group {{ ticket.group.name }}, unknown [{{ ticket.agent.name }}]"
`

// Rules see the names of a ticket's requester, agent and group, looked up
// on the desk a few a cycle and cached; unknown ones are "".
func TestRulesSeePeopleNames(t *testing.T) {
	e := newEnv(t, peopleRules)
	d := e.sim.Desk
	g := d.AddGroup(sdsim.Group{Name: "Network"})
	ag := d.AddAgent(sdsim.Agent{FirstName: "Andy", LastName: "Agent", Email: "andy@example.com", Active: true})
	rq := d.AddRequester(sdsim.Requester{FirstName: "Rita", LastName: "Requester", PrimaryEmail: "rita@example.com", Active: true})
	long := "the core switch is down " + strings.Repeat("x", 3000)
	assigned := d.AddTicket(sdsim.Ticket{Subject: "switch", Priority: 4, Description: long, RequesterID: rq.ID, ResponderID: ag.ID, GroupID: g.ID}).ID
	unassigned := d.AddTicket(sdsim.Ticket{Subject: "switch 2", Priority: 4, Description: "a switch", RequesterID: rq.ID, GroupID: g.ID}).ID
	other := d.AddTicket(sdsim.Ticket{Subject: "no group", Priority: 4, Description: "a switch", RequesterID: 999999}).ID

	lookups := func() int {
		n := 0
		for _, r := range d.Requests() {
			if strings.HasPrefix(r.Path, "/api/v2/requesters/") || strings.HasPrefix(r.Path, "/api/v2/agents/") || strings.HasPrefix(r.Path, "/api/v2/groups/") {
				n++
			}
		}
		return n
	}
	e.runOnce()
	if n := lookups(); n == 0 || n > firing.PeopleRequestsPerCycle {
		t.Fatalf("first cycle: %d look-ups, want 1 to %d", n, firing.PeopleRequestsPerCycle)
	}
	notes := e.notesWith(assigned, "For Rita Requester")
	if len(notes) != 1 || !strings.Contains(notes[0].Body, "agent Andy Agent (andy@example.com), group Network") {
		t.Fatalf("assigned ticket's notes: %+v", e.sim.Desk.Conversations(assigned))
	}
	if n := e.notesWith(unassigned, "agent  (), group Network, unknown []"); len(n) != 1 {
		t.Errorf("unassigned ticket's notes: %+v", e.sim.Desk.Conversations(unassigned))
	}
	if n := len(e.sim.Desk.Conversations(other)); n != 0 {
		t.Errorf("ticket without a group got %d notes", n)
	}
	// Cached: the next cycles ask nothing until the names are stale.
	before := lookups()
	e.next()
	if n := lookups(); n != before {
		t.Errorf("second cycle looked up %d names again", n-before)
	}
	e.clk.Advance(firing.PeopleTTL)
	e.runOnce()
	if n := lookups(); n == before || n-before > firing.PeopleRequestsPerCycle {
		t.Errorf("after %s: %d look-ups, want 1 to %d", firing.PeopleTTL, n-before, firing.PeopleRequestsPerCycle)
	}
}

// A rules file that reads no names looks none up.
func TestNoPeopleLookups(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: a
    query: "priority:4"
    actions: [{note: "{{ ticket.subject }}"}]
`)
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 4, RequesterID: 5, GroupID: 3})
	e.runOnce()
	for _, r := range e.sim.Desk.Requests() {
		if strings.HasPrefix(r.Path, "/api/v2/requesters/") || strings.HasPrefix(r.Path, "/api/v2/groups/") {
			t.Errorf("looked up %s", r.Path)
		}
	}
}

// assignThenNote's first action moves the ticket out of its own query.
const assignThenNote = `version: 1
rules:
  - name: route
    query: "status:open AND agent_id:0 AND priority:4"
    actions:
      - set: {responder_id: %d, tags: [routed]}
      - note: "Routed to the first line."
`

// TestFiringMovedOutOfItsQueryStillFinishes: a firing whose first action
// (an assignment) takes the ticket out of the rule's query, and which then
// stops (the assignment's answer is lost, or the note meets a 5xx), finishes
// on resume: the assignment is not sent again (its values hold) and the
// note is written exactly once, in the same episode.
func TestFiringMovedOutOfItsQueryStillFinishes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(id int64) sdsim.Fault
		puts  int
	}{
		{"the assignment's answer is lost", func(id int64) sdsim.Fault {
			return sdsim.Fault{Kind: sdsim.FaultDropAfter, Count: 2, Method: "PUT", PathPrefix: fmt.Sprintf("/api/v2/tickets/%d", id)} // every attempt
		}, 2},
		{"the note meets a 5xx", func(id int64) sdsim.Fault {
			return sdsim.Fault{Kind: sdsim.FaultServerError, Count: 2, Method: "POST", PathPrefix: fmt.Sprintf("/api/v2/tickets/%d/notes", id)}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fmt.Sprintf(assignThenNote, sdsim.DefaultAgentID))
			agent := sdsim.DefaultAgentID
			id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4}).ID
			e.sim.Desk.InjectFault(tc.fault(id))
			if res := e.runOnce(); res[0].Fired != 0 {
				t.Fatalf("first cycle fired %d; want the firing cut short", res[0].Fired)
			}
			if tk, _ := e.sim.Desk.Ticket(id); tk.ResponderID != agent {
				t.Fatalf("ticket assigned to %d, want %d: the assignment reached the desk", tk.ResponderID, agent)
			}
			ended, fired := 0, 0
			for range 4 {
				e.clk.Advance(DefaultLease)
				res := e.runOnce()
				ended += res[0].Ended
				fired += res[0].Fired
			}
			if n := len(e.notesWith(id, "Routed to the first line.")); n != 1 {
				t.Errorf("%d notes, want exactly 1: the firing must finish although the ticket left the query", n)
			}
			puts := 0
			for _, r := range e.sim.Desk.Requests() {
				if r.Method == "PUT" && r.Path == fmt.Sprintf("/api/v2/tickets/%d", id) {
					puts++
				}
			}
			if puts != tc.puts {
				t.Errorf("%d updates sent, want %d: an update whose values hold is not sent again", puts, tc.puts)
			}
			if fired != 1 || ended != 1 {
				t.Errorf("fired %d, ended %d over the later cycles; want the firing finished, then its episode ended", fired, ended)
			}
		})
	}
}

// TestIdenticalNoteOfAnotherRuleHidesNoLostNote: on a desk that strips
// HTML comments, two rules write the same note text on one ticket. The
// first one's note never reaches the desk (the connection drops before it
// is applied); when it resumes, the second rule's identical note must not
// pass for it: each note carries its firing's invisible tag.
func TestIdenticalNoteOfAnotherRuleHidesNoLostNote(t *testing.T) {
	e := newEnvSim(t, []sdsim.Option{sdsim.WithHTMLCommentsStripped()}, `version: 1
rules:
  - name: first
    query: "priority:4"
    actions: [{note: "Escalated."}]
  - name: second
    query: "priority:4"
    actions: [{note: "Escalated."}]
`)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "VPN", Priority: 4}).ID
	e.noteFault(id, sdsim.FaultDrop, 1)
	// Only the second rule fires and writes its note at first; the first
	// rule's lost note is written on resume.
	e.resumeLostNote(t, id, lostNote{text: "Escalated.", fired: 1, before: 1, leases: 2, after: 2})
}

const explainRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: page-urgent
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}"}
  - name: remind
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    once: every 30m
    actions:
      - note: "Still unassigned."
  - name: welcome
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    once: ticket
    actions:
      - reply: "We are on it."
`

// TestExplainerFollowsTheLedger: /ticket why and rules why say, for a live
// ticket, whether each rule holds and what the ledger says of its episode,
// through a firing, the end of the episode and the once: modes.
func TestExplainerFollowsTheLedger(t *testing.T) {
	e := newEnv(t, explainRules)
	set := mustRules(t, explainRules)
	ex := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return set }, e.st, e.clk.Now)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	explain := func() string {
		t.Helper()
		out, err := ex.Explain(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ts := func(d time.Duration) string { return t0.Add(d).UTC().Format(time.RFC3339) }
	wantLines := func(step, out string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(out, l) {
				t.Errorf("%s: explanation lacks %q:\n%s", step, l, out)
			}
		}
	}

	wantLines("before any poll", explain(),
		fmt.Sprintf("rule page-urgent on ticket #%d: FIRES", id),
		"  query holds: status:open AND agent_id:0 AND priority:4",
		"page-urgent: never fired; can fire on the next poll where it holds")

	e.runOnce()
	e.clk.Advance(time.Minute)
	wantLines("after firing", explain(),
		"page-urgent: episode 1 open, fired "+ts(0)+"; fires again only after a complete poll in which it no longer holds",
		"remind: episode 1 open, fired "+ts(0)+"; can fire again from "+ts(30*time.Minute),
		"welcome: episode 1 open, fired "+ts(0)+"; once: ticket, so it never fires again")

	e.assign(id, sdsim.DefaultAgentID)
	e.runOnce()
	wantLines("after assignment", explain(),
		fmt.Sprintf("rule page-urgent on ticket #%d: does not fire", id),
		"page-urgent: episode 1 ended "+ts(time.Minute)+", fired "+ts(0)+"; can fire again when it holds",
		"welcome: episode 1 ended "+ts(time.Minute)+", fired "+ts(0)+"; once: ticket, so it never fires again")

	if _, err := ex.Explain(t.Context(), 999999); !errors.Is(err, sdclient.ErrNotFound) || !strings.Contains(err.Error(), "ticket 999999 not found") {
		t.Errorf("unknown ticket: %v; want ticket 999999 not found, wrapping ErrNotFound", err)
	}
	noRules := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return nil }, e.st, nil)
	if out, err := noRules.Explain(t.Context(), id); err != nil || !strings.Contains(out, "No rules are loaded") {
		t.Errorf("without rules: %q, %v", out, err)
	}
	noLedger := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return set }, nil, nil)
	if out, err := noLedger.Explain(t.Context(), id); err != nil || strings.Contains(out, "Ledger:") || !strings.Contains(out, "rule page-urgent") {
		t.Errorf("without a ledger: %q, %v; want the rules and no ledger section", out, err)
	}
}

// TestExplainerReadsTheMirror: with the mirror the scheduler keeps, rules
// why reads the ticket from it at no desk request and says how fresh it
// is; it reads the desk, saying why, for a ticket the mirror does not
// hold, a mirror nobody keeps up to date, and a mirror not built yet.
func TestExplainerReadsTheMirror(t *testing.T) {
	e := newEnv(t, explainRules)
	set := mustRules(t, explainRules)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4}).ID
	e.runOnce() // the full sync builds the mirror; the cursor is the desk's clock less the overlap
	ex := firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return set }, e.st, e.clk.Now, firing.ExplainFromMirror(e.st))

	explain := func(step string, id int64, first string, reads int) string {
		t.Helper()
		e.sim.Desk.ResetRequests()
		out, err := ex.Explain(t.Context(), id)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got, _, _ := strings.Cut(out, "\n"); got != first {
			t.Errorf("%s: first line %q, want %q", step, got, first)
		}
		if !strings.Contains(out, fmt.Sprintf("Ticket #%d ", id)) || !strings.Contains(out, "Ledger:") {
			t.Errorf("%s: no explanation:\n%s", step, out)
		}
		if got := e.sim.Desk.TicketRequests(); len(got) != reads {
			t.Errorf("%s: ticket requests %v, want %d", step, got, reads)
		}
		return out
	}

	out := explain("in the mirror", id, "From deskbot's mirror, as of 08:59:30 UTC (change feed cursor); the desk was not asked.", 0)
	if !strings.Contains(out, fmt.Sprintf("rule page-urgent on ticket #%d: FIRES", id)) || !strings.Contains(out, `"Mail down"`) {
		t.Errorf("the mirrored ticket is not explained:\n%s", out)
	}

	later := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer jam", Priority: 4}).ID
	explain("not in the mirror", later, fmt.Sprintf("Read from the desk: deskbot's mirror does not hold ticket #%d.", later), 1)

	e.clk.Advance(20 * time.Minute) // nobody syncs
	explain("mirror too old", id, "Read from the desk: deskbot's mirror is too old to trust (as of 08:59:30 UTC, more than 15 minutes ago).", 1)

	empty := openStore(t, ":memory:")
	ex = firing.NewExplainer(firing.ClientDesk(e.client), func() *rules.Set { return set }, e.st, e.clk.Now, firing.ExplainFromMirror(empty))
	explain("no mirror yet", id, "Read from the desk: the mirror is not built yet.", 1)
}

// TestRuleOverBudgetIsReportedOthersRun: a rule whose nested loops over
// the tags go over the run-time budget on a ticket with many tags fails on
// that ticket only; it is counted, reported by RuleHealth (/readyz), and
// the other rules act as usual. Within budget again, it is forgotten.
func TestRuleOverBudgetIsReportedOthersRun(t *testing.T) {
	e := newEnv(t, `version: 1
rules:
  - name: nested
    query: "priority:4"
    if: 'any(ticket.tags, {any(ticket.tags, {# == "zz" + #})})'
    actions: [{note: "never"}]
  - name: plain
    query: "priority:4"
    actions: [{note: "plain"}]
`)
	tags := make([]string, 400) // 400 × 400 loop steps: over the 100,000 of a ticket
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	big := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "many tags", Priority: 4, Tags: tags}).ID
	small := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "few tags", Priority: 4, Tags: tags[:3]}).ID
	e.runOnce()
	for _, id := range []int64{big, small} {
		if n := len(e.notesWith(id, "plain")); n != 1 {
			t.Errorf("ticket %d: %d notes of the other rule, want 1", id, n)
		}
	}
	if got := metricValue(t, e.s.m.OverBudget.WithLabelValues("nested")); got != 1 {
		t.Errorf("over-budget metric = %v, want 1 (one ticket)", got)
	}
	err := e.s.RuleHealth(t.Context())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`rule "nested" went over its run-time budget on 1 tickets (e.g. #%d)`, big)) {
		t.Errorf("RuleHealth = %v", err)
	}
	e.sim.Desk.UpdateTicket(big, func(x *sdsim.Ticket) { x.Tags = tags[:5] })
	e.next()
	if err := e.s.RuleHealth(t.Context()); err != nil {
		t.Errorf("RuleHealth after the ticket shrank = %v, want nil", err)
	}
}

// TestStopIsPromptDuringAnExpensiveEvaluation: a rule that costs a few
// milliseconds a ticket over thousands of tickets makes a long
// evaluation; cancelling the cycle's context (a shutdown) ends it within
// a chunk of tickets instead of after the whole mirror, and nothing of
// the half-evaluated cycle acts or ends an episode.
func TestStopIsPromptDuringAnExpensiveEvaluation(t *testing.T) {
	e := newEnv(t, urgentRules)
	for i := range 3000 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprint("t", i), Priority: 1 + i%2})
	}
	e.runOnce() // the full sync, with cheap rules
	slow := mustRules(t, `version: 1
rules:
  - name: slow
    query: "status:open"
    if: 'let xs = 1..315; !all(xs, {all(xs, {# > 0})})'
    actions: [{note: "never"}]
`)
	if err := e.s.Reload(slow); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	stop := time.AfterFunc(300*time.Millisecond, cancel)
	defer stop.Stop()
	started := time.Now()
	c := e.s.runCycle(ctx, scheduled)
	took := time.Since(started)
	if c.Skipped != "stopping" || len(c.Jobs) != 1 || c.Jobs[0].Complete || c.Jobs[0].Ended != 0 {
		t.Fatalf("cycle %+v, want it stopped while evaluating", c)
	}
	// The whole evaluation takes 3,000 × several ms; a chunk of 32 a
	// fraction of a second, even under the race detector.
	if took > 10*time.Second {
		t.Errorf("the cycle took %v to stop", took)
	}
}
