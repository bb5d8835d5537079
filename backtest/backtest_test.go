package backtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/history"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// t0 is a Monday: the hand-built week starts here.
var t0 = time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// tk is a ticket as the history records it.
func tk(id int64, status, prio int, agent int64, created time.Time, tags ...string) *sdclient.Ticket {
	return &sdclient.Ticket{ID: id, Subject: fmt.Sprintf("ticket %d", id), Status: status, Priority: prio,
		ResponderID: ptr(agent), CreatedAt: created, UpdatedAt: created, Tags: tags}
}

// at returns t with updated_at set to when, as the feed records a change.
func at(t *sdclient.Ticket, when time.Time) history.Record {
	c := *t
	c.UpdatedAt = when
	return history.Record{At: when, Ticket: &c}
}

func load(t *testing.T, yaml string) *rules.Set {
	t.Helper()
	set, err := rules.Load("rules.yaml", []byte("version: 1\nchannels: {desk: \"#desk\"}\nrules:\n"+yaml))
	if err != nil {
		t.Fatalf("load rules: %v", err)
	}
	return set
}

// firings are a report's firings as "rule #id @offset" lines.
func firings(rep *Report) []string {
	var out []string
	for _, f := range rep.Firings {
		out = append(out, fmt.Sprintf("%s #%d @%s", f.Rule, f.TicketID, f.At.Sub(t0)))
	}
	return out
}

const (
	urgentRule = `  - name: urgent
    query: "status:open AND priority:4"
    every: 1m
    actions:
      - alert: {channel: desk, text: "urgent {{ ticket.id }}"}
      - reply: "We are on it."
`
	staleRule = `  - name: stale
    query: "status:open AND agent_id:0"
    if: 'now() - ticket.created_at > duration("30m")'
    every: 5m
    actions:
      - note: "unassigned for 30 minutes"
`
)

func TestRunFirings(t *testing.T) {
	h := 0 * time.Hour
	cases := []struct {
		name    string
		rules   string
		records func(m *history.Memory)
		want    []string
	}{{
		name:  "once per episode: fires when it starts matching, again only after it stopped",
		rules: urgentRule,
		records: func(m *history.Memory) {
			a := tk(1, 2, 1, 7, t0)
			m.Add(at(a, t0))
			a.Priority = 4
			m.Add(at(a, t0.Add(90*time.Second))) // matches from 1m30s: fires at the 2m cycle
			m.Add(at(a, t0.Add(10*time.Minute))) // still matching: nothing
			a.Priority = 2
			m.Add(at(a, t0.Add(20*time.Minute))) // episode ends
			a.Priority = 4
			m.Add(at(a, t0.Add(30*time.Minute+10*time.Second))) // a new episode
		},
		want: []string{"urgent #1 @2m0s", "urgent #1 @31m0s"},
	}, {
		name:  "a condition on time fires when it becomes true, at the rule's interval",
		rules: staleRule,
		records: func(m *history.Memory) {
			m.Add(at(tk(2, 2, 1, 0, t0.Add(-10*time.Minute)), t0))
			m.Add(at(tk(3, 2, 1, 9, t0.Add(-2*time.Hour)), t0)) // assigned: never
		},
		want: []string{"stale #2 @25m0s"},
	}, {
		name:  "a ticket gone from the desk ends its episode; resolved ones leave the query",
		rules: urgentRule,
		records: func(m *history.Memory) {
			a := tk(4, 2, 4, 0, t0)
			m.Add(at(a, t0))
			m.Add(history.Record{At: t0.Add(5 * time.Minute), Ticket: &sdclient.Ticket{ID: 4}, Gone: true})
			// Back (restored) at 7m: a new episode. The change is stamped
			// at the 7m cycle's instant, which read the desk just before
			// it: the 8m cycle fires.
			m.Add(at(a, t0.Add(7*time.Minute)))
			a.Status = 4
			m.Add(at(a, t0.Add(9*time.Minute)))
		},
		want: []string{"urgent #4 @0s", "urgent #4 @8m0s"},
	}, {
		// The live run's reminder at 3h replied, which the history shows as
		// a change stamped 3h: that cycle's own write must not undo its
		// firing. The next reminder waits two hours from the reply.
		name: "a change stamped at a cycle's instant is seen by the next cycle",
		rules: `  - name: reminder
    query: "status:3"
    if: now() - ticket.updated_at > duration("2h")
    every: 1h
    actions:
      - reply: "still waiting"
`,
		records: func(m *history.Memory) {
			a := tk(13, 3, 2, 5, t0)
			m.Add(at(a, t0))
			m.Add(at(a, t0.Add(3*time.Hour))) // the 3h reminder's reply
		},
		want: []string{"reminder #13 @3h0m0s", "reminder #13 @6h0m0s"},
	}, {
		name: "the rule's cap holds the rest for the next cycles, most urgent first",
		rules: `  - name: capped
    query: "status:open"
    every: 10m
    max_firings_per_cycle: 2
    actions:
      - note: "seen"
`,
		records: func(m *history.Memory) {
			for id := int64(1); id <= 5; id++ {
				m.Add(at(tk(id, 2, int(1+id%4), 0, t0.Add(-time.Duration(id)*time.Minute)), t0))
			}
		},
		// priorities: #1 2, #2 3, #3 4, #4 1, #5 2; tick is 10m (the only rule)
		want: []string{"capped #2 @0s", "capped #3 @0s", "capped #1 @10m0s", "capped #5 @10m0s", "capped #4 @20m0s"},
	}, {
		name: "cron rules run at their times only",
		rules: `  - name: morning
    query: "status:open"
    cron: "0 9 * * *"
    once: every 12h
    actions:
      - note: "good morning"
`,
		records: func(m *history.Memory) {
			m.Add(at(tk(6, 2, 1, 0, t0), t0.Add(time.Hour)))
		},
		want: []string{"morning #6 @9h0m0s", "morning #6 @33h0m0s"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &history.Memory{}
			tc.records(m)
			rep, err := Run(context.Background(), load(t, tc.rules), m, t0, t0.Add(36*time.Hour+h))
			if err != nil {
				t.Fatal(err)
			}
			if got := firings(rep); !slices.Equal(got, tc.want) {
				t.Errorf("firings:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// week is a hand-built week: ticket 10 urgent on Monday morning, ticket 11
// urgent on Wednesday afternoon (created 30s before the 14:00 cycles of
// deskbot and of the hourly supervisor) and again on Thursday, ticket 12
// left unassigned on Tuesday.
func week() *history.Memory {
	m := &history.Memory{}
	a := tk(10, 2, 1, 0, t0)
	m.Add(at(a, t0))
	a.Priority = 4
	m.Add(at(a, t0.Add(9*time.Hour+30*time.Second)))
	a.Status = 4
	m.Add(at(a, t0.Add(11*time.Hour)))
	b := tk(11, 2, 4, 5, t0.Add(2*24*time.Hour+14*time.Hour-30*time.Second))
	m.Add(at(b, b.CreatedAt))
	b.Priority = 3
	m.Add(at(b, t0.Add(3*24*time.Hour)))
	b.Priority = 4
	m.Add(at(b, t0.Add(3*24*time.Hour+14*time.Hour+20*time.Second)))
	c := tk(12, 2, 1, 0, t0.Add(24*time.Hour+8*time.Hour))
	m.Add(at(c, c.CreatedAt))
	return m
}

func TestRunWeekReport(t *testing.T) {
	set := load(t, urgentRule+staleRule)
	rep, err := Run(context.Background(), set, week(), t0, t0.Add(7*24*time.Hour), WithSupervisor(true))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"stale #10 @35m0s", "urgent #10 @9h1m0s", "stale #12 @32h35m0s", "urgent #11 @62h0m0s", "urgent #11 @86h1m0s"}
	if got := firings(rep); !slices.Equal(got, want) {
		t.Fatalf("firings:\n got %q\nwant %q", got, want)
	}
	u := rep.Rules[0]
	if u.Name != "urgent" || u.Firings != 3 || u.Tickets != 2 || u.Messages != 3 || u.Replies != 3 || u.Pages != 0 {
		t.Errorf("urgent: %+v", u)
	}
	if len(u.Days) != 3 || u.Days[0].Date != "2026-11-16" || u.Days[1].Date != "2026-11-18" || u.Days[2].Firings != 1 {
		t.Errorf("urgent's days: %+v", u.Days)
	}
	// matched at 9h00m30s, fired at 9h01m: 30s; #11 30s after its creation
	// (61h59m30s to 62h); and 40s on Thursday (86h00m20s to 86h01m).
	if u.TimeToFire.N != 3 || u.TimeToFire.Median() != 30*time.Second || u.TimeToFire.P90() != 40*time.Second {
		t.Errorf("urgent's time to fire: %+v", u.TimeToFire)
	}
	s := rep.Rules[1]
	if s.Notes != 2 || s.Messages != 0 || s.Approximate {
		t.Errorf("stale: %+v", s)
	}
	// created at 0 and 32h, matching 30m later; the 5-minute rule fires at
	// 35m: 5 minutes after.
	if s.TimeToFire.Median() != 5*time.Minute {
		t.Errorf("stale's time to fire: %+v", s.TimeToFire)
	}
	if u.BusiestHour == nil || u.BusiestHour.Firings != 1 || !u.BusiestHour.Start.Equal(t0.Add(9*time.Hour)) {
		t.Errorf("busiest hour: %+v", u.BusiestHour)
	}
	// The hourly supervisor: runs at 0h, 1h, ...: the urgent firings come
	// at 10h (59m later), 62h (at the same time) and 87h (59m later).
	sup := u.Supervisor
	if sup == nil || sup.Firings != 3 || sup.Compared != 3 || sup.Missed != 0 || sup.Later.Median() != 59*time.Minute {
		t.Errorf("supervisor: %+v", sup)
	}
	if rep.Totals.Firings != 5 || rep.Records == 0 || rep.Tickets != 3 {
		t.Errorf("totals: %+v records %d tickets %d", rep.Totals, rep.Records, rep.Tickets)
	}
}

func TestSupervisorMisses(t *testing.T) {
	// An urgent ticket from 10m: deskbot fires at once; the hourly
	// supervisor runs at 0h, 1h, 2h.
	cases := []struct {
		name                        string
		handled                     bool // priority lowered at 25m
		to                          time.Duration
		compared, missed, unreached int
	}{
		{"handled within the hour: never", true, 3 * time.Hour, 0, 1, 0},
		{"still urgent at 1h: later", false, 3 * time.Hour, 1, 0, 0},
		// the replay ends before the supervisor's next run: not a miss
		{"replay ends at 50m: unreached", false, 50 * time.Minute, 0, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &history.Memory{}
			m.Add(at(tk(19, 2, 1, 0, t0), t0)) // the history starts at t0
			a := tk(20, 2, 4, 0, t0.Add(10*time.Minute))
			m.Add(at(a, a.CreatedAt))
			if tc.handled {
				a.Priority = 2
				m.Add(at(a, t0.Add(25*time.Minute)))
			}
			rep, err := Run(context.Background(), load(t, urgentRule), m, t0, t0.Add(tc.to), WithSupervisor(true))
			if err != nil {
				t.Fatal(err)
			}
			sup := rep.Rules[0].Supervisor
			if rep.Rules[0].Firings != 1 || sup.Compared != tc.compared || sup.Missed != tc.missed || sup.Unreached != tc.unreached {
				t.Errorf("firings %d, supervisor %+v", rep.Rules[0].Firings, sup)
			}
		})
	}
}

// A weekday cron rule waits for 09:00; the hourly supervisor sends the
// reminder at its first run after the ticket matched.
func TestSupervisorEarlier(t *testing.T) {
	m := &history.Memory{}
	m.Add(at(tk(21, 3, 2, 5, t0), t0)) // pending since Monday 00:00
	set := load(t, `  - name: reminder
    query: "status:3"
    if: now() - ticket.updated_at > duration("2h")
    cron: "0 9 * * 1-5"
    actions:
      - reply: "still waiting"
`)
	rep, err := Run(context.Background(), set, m, t0, t0.Add(10*time.Hour), WithSupervisor(true))
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rules[0]
	sup := r.Supervisor
	if r.Firings != 1 || sup.Firings != 1 || sup.Compared != 0 || sup.Missed != 0 || sup.Earlier.N != 1 || sup.Earlier.Median() != 6*time.Hour {
		t.Fatalf("deskbot %d firings; supervisor %+v: want one firing at 03:00, 6h before deskbot's at 09:00", r.Firings, sup)
	}
	const want = "1 firing; 1 of deskbot's it made earlier (deskbot's schedule waited longer than its hour): median 6h, p90 6h earlier"
	if got := SupervisorText(r); got != want {
		t.Errorf("SupervisorText:\n got %q\nwant %q", got, want)
	}
}

const oncallYAML = `oncall:
  schedules:
    - {name: s, time_zone: UTC, rotation: 1w, handoff: "09:00", start: 2025-01-06, members: [a@example.com]}
  policies:
    - {name: p, levels: [{schedule: s, after: 10m}]}
`

func TestGroupingAndCycleCap(t *testing.T) {
	flood := `  - name: flood
    query: "status:open AND priority:1"
    every: 1m
    group_over: 3
    actions:
      - alert: {channel: desk, text: "{{ ticket.id }}"}
      - page: {policy: p, channel: desk, text: "x"}
`
	set := load(t, flood+urgentRule+oncallYAML) // oncall: after the rules, a key of its own
	m := &history.Memory{}
	for id := int64(1); id <= 4; id++ { // four at once: over group_over, one message
		m.Add(at(tk(id, 2, 1, 0, t0), t0))
	}
	for id := int64(5); id <= 7; id++ { // three: cards each
		m.Add(at(tk(id, 2, 1, 0, t0), t0.Add(time.Hour)))
	}
	m.Add(at(tk(8, 2, 4, 0, t0), t0.Add(2*time.Hour)))
	cases := []struct {
		name                string
		cap                 int
		flood               Totals
		urgentAt, lastFlood time.Duration
	}{
		// Stamped at 1h and 2h, the cycles' instants: the cycles after
		// them see the changes (the starting state, the first cycle).
		{"no cap across rules", 0, Totals{Firings: 7, Messages: 1 + 3, Pages: 7}, 2*time.Hour + time.Minute, time.Hour + time.Minute},
		// two firings a cycle across rules: four tickets take two cycles
		// (two each: not over group_over, cards each).
		{"two per cycle", 2, Totals{Firings: 7, Messages: 7, Pages: 7}, 2*time.Hour + time.Minute, time.Hour + 2*time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), set, m, t0, t0.Add(3*time.Hour), WithCycleCap(tc.cap))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Rules[0].Totals != tc.flood {
				t.Errorf("flood: %+v, want %+v", rep.Rules[0].Totals, tc.flood)
			}
			var lastFlood, urgent time.Duration
			for _, f := range rep.Firings {
				switch f.Rule {
				case "flood":
					lastFlood = f.At.Sub(t0)
				case "urgent":
					urgent = f.At.Sub(t0)
				}
			}
			if lastFlood != tc.lastFlood || urgent != tc.urgentAt {
				t.Errorf("last flood firing at %s, urgent at %s; want %s, %s", lastFlood, urgent, tc.lastFlood, tc.urgentAt)
			}
			if tc.cap > 0 && rep.Rules[0].HeldBack == 0 {
				t.Error("the cap held nothing back")
			}
		})
	}
}

func TestNoHistory(t *testing.T) {
	_, err := Run(context.Background(), load(t, urgentRule), &history.Memory{}, t0, t0.Add(time.Hour))
	if !errors.Is(err, ErrNoHistory) {
		t.Fatalf("err = %v, want ErrNoHistory", err)
	}
}

func TestApproximate(t *testing.T) {
	set := load(t, `  - name: vip
    query: "status:open"
    if: 'ticket.requester.name contains "CEO" || ticket.description_text contains "down"'
    actions:
      - note: "vip"
`+urgentRule)
	m := &history.Memory{}
	m.Add(at(tk(1, 2, 4, 0, t0), t0))
	rep, err := Run(context.Background(), set, m, t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Rules[0].Approximate || !slices.Equal(rep.Rules[0].Unrecorded, []string{"requester", "description_text"}) || rep.Rules[1].Approximate {
		t.Errorf("approximate: %+v / %+v", rep.Rules[0], rep.Rules[1])
	}
	if !strings.Contains(strings.Join(rep.Limits, "\n"), "approximate") {
		t.Errorf("limits do not say it: %q", rep.Limits)
	}
}

func TestCompare(t *testing.T) {
	ctx := context.Background()
	old := load(t, urgentRule+staleRule)
	// The new file: urgent only for priority 4 AND unassigned, stale
	// gone, a new rule for high priority.
	cur := load(t, strings.Replace(urgentRule, "priority:4", "priority:4 AND agent_id:0", 1)+`  - name: high
    query: "status:open AND priority:3"
    actions:
      - note: "high"
`)
	oldRep, err := Run(ctx, old, week(), t0, t0.Add(7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	newRep, err := Run(ctx, cur, week(), t0, t0.Add(7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	d := Compare(oldRep, newRep)
	if !slices.Equal(d.AddedRules, []string{"high"}) || !slices.Equal(d.RemovedRules, []string{"stale"}) {
		t.Errorf("rules added %q removed %q", d.AddedRules, d.RemovedRules)
	}
	got := map[string]RuleDiff{}
	for _, rd := range d.Rules {
		got[rd.Name] = rd
	}
	if u := got["urgent"]; u.Change != "changed" || !slices.Equal(u.RemovedTickets, []int64{11}) || len(u.AddedTickets) != 0 || u.OldFirings != 3 || u.NewFirings != 1 {
		t.Errorf("urgent: %+v", u)
	}
	if hi := got["high"]; hi.Change != "added" || !slices.Equal(hi.AddedTickets, []int64{11}) {
		t.Errorf("high: %+v", hi)
	}
	if st := got["stale"]; st.Change != "removed" || !slices.Equal(st.RemovedTickets, []int64{10, 12}) {
		t.Errorf("stale: %+v", st)
	}
	if newRep.Against != d {
		t.Error("Compare did not set Against")
	}
}

func TestJSONShape(t *testing.T) {
	ctx := context.Background()
	set := load(t, urgentRule)
	rep, err := Run(ctx, set, week(), t0, t0.Add(7*24*time.Hour), WithSupervisor(true))
	if err != nil {
		t.Fatal(err)
	}
	Compare(rep, rep)
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"file", "history_start", "from", "to", "records", "tickets", "cycles", "totals", "rules", "firings", "limits", "against"} {
		if _, ok := top[k]; !ok {
			t.Errorf("no %q in %s", k, raw)
		}
	}
	var rs []map[string]any
	if err := json.Unmarshal(top["rules"], &rs); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "schedule", "class", "approximate", "firings", "messages", "pages", "replies", "notes", "updates",
		"tickets", "held_back", "busiest_hour", "firings_by_hour_of_day", "time_to_fire", "days", "supervisor"} {
		if _, ok := rs[0][k]; !ok {
			t.Errorf("rule has no %q: %v", k, rs[0])
		}
	}
	ttf := rs[0]["time_to_fire"].(map[string]any)
	if ttf["median_seconds"].(float64) != 30 || ttf["p90_seconds"].(float64) != 40 {
		t.Errorf("time_to_fire = %v", ttf)
	}
}

func TestWriteText(t *testing.T) {
	ctx := context.Background()
	set := load(t, urgentRule+staleRule)
	rep, err := Run(ctx, set, week(), t0, t0.Add(7*24*time.Hour), WithSupervisor(true))
	if err != nil {
		t.Fatal(err)
	}
	old, err := Run(ctx, load(t, urgentRule), week(), t0, t0.Add(7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	Compare(old, rep)
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Backtest of rules.yaml from 2026-11-16T00:00:00Z to 2026-11-23T00:00:00Z (7d)",
		"In all: 5 firings, 3 chat messages, 0 pages, 3 public replies e-mailed to requesters, 2 notes, 0 updates.",
		"rule urgent (every 1m; alerts and direct messages first)",
		"firings: 3 on 2 tickets",
		"busiest hour: 2026-11-16 09:00Z (1 firing)",
		"time from matching to firing: median 30s, p90 40s",
		"the desk's hourly supervisor: 3 firings; it made 3 of deskbot's firings too, 2 later and 1 at the same time: median 59m, p90 59m later",
		"2026-11-18        1         1      0        1      0        0",
		"Against rules.yaml: 3 firings with it, 5 with this file (public replies 3 -> 3,",
		"rules added: stale",
		"stale (added): 0 -> 2 firings; adds 2 tickets (#10, #12)",
		"history exists from 2026-11-16T00:00:00Z",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
