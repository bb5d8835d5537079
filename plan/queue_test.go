package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// classRules has a rule of each Class, and priority: overriding the
// actions' class both ways.
const classRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - {name: reply, query: "priority:1", actions: [{reply: "We are on it."}]}
  - {name: note, query: "priority:1", actions: [{note: "checked"}]}
  - {name: update, query: "priority:1", actions: [{set: {status: 3}}]}
  - {name: alert, query: "priority:1", actions: [{note: "paged"}, {alert: {channel: oncall, text: "x"}}]}
  - {name: reply-high, query: "priority:1", priority: high, actions: [{reply: "We are on it."}]}
  - {name: alert-low, query: "priority:1", priority: low, actions: [{alert: {channel: oncall, text: "x"}}]}
  - {name: note-normal, query: "priority:1", priority: normal, actions: [{note: "x"}, {alert: {channel: oncall, text: "x"}}]}
`

func TestClassOf(t *testing.T) {
	set := mustRules(t, classRules)
	for name, want := range map[string]Class{
		"reply":       ClassReply,
		"note":        ClassUpdate,
		"update":      ClassUpdate,
		"alert":       ClassAlert, // the most urgent action decides
		"reply-high":  ClassPage,
		"alert-low":   ClassDigest,
		"note-normal": ClassUpdate,
	} {
		if got := ClassOf(set.Rule(name)); got != want {
			t.Errorf("rule %s: class %v, want %v", name, got, want)
		}
	}
	for kind, want := range map[rules.ActionKind]Class{rules.ActionPage: ClassPage, rules.ActionDM: ClassAlert} {
		if got := KindClass(kind); got != want {
			t.Errorf("action %s: class %v, want %v", kind, got, want)
		}
	}
}

// queueItem is a decision of TestOrder: its rule, ticket, ticket
// priority, how long it has waited and whether it is under way.
type queueItem struct {
	rule   string
	ticket int64
	prio   int
	waited time.Duration
	begun  bool
}

func TestOrder(t *testing.T) {
	t0 := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	set := mustRules(t, classRules)
	now := t0.Add(time.Hour)
	// Nine new alerts and two notes waiting for 10 minutes: one place in
	// five goes to the longest-waiting.
	var share []queueItem
	for i := range 9 {
		share = append(share, queueItem{"alert", int64(10 + i), 1, 0, false})
	}
	share = append(share, queueItem{"note", 30, 1, 10 * time.Minute, false}, queueItem{"note", 31, 1, 10 * time.Minute, false})
	for _, tc := range []struct {
		name  string
		items []queueItem
		want  []int64 // tickets in order
	}{
		{"Class, then ticket priority; firings under way first", []queueItem{
			{"note", 1, 1, 0, false}, {"note", 2, 4, 0, false}, {"alert", 3, 1, 0, false}, {"reply-high", 4, 1, 0, false}, {"reply", 5, 2, 0, true},
		}, []int64{5, 4, 3, 2, 1}},
		{"the rule's priority: before its actions", []queueItem{
			{"alert-low", 1, 4, 0, false}, {"reply", 2, 1, 0, false}, {"note-normal", 3, 1, 0, false},
		}, []int64{3, 2, 1}},
		{"age within a class and priority: longest waiting first, then the oldest ticket", []queueItem{
			{"note", 1, 2, 0, false}, {"note", 2, 2, 5 * time.Minute, false}, {"note", 3, 2, time.Minute, false}, {"note", 4, 2, 5 * time.Minute, false},
		}, []int64{2, 4, 3, 1}},
		{"routine work keeps one place in five", share, []int64{10, 11, 12, 13, 30, 14, 15, 16, 17, 31, 18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			since, begun := map[rules.FiringKey]time.Time{}, map[rules.FiringKey]bool{}
			var ds []rules.Decision
			for _, it := range tc.items {
				created := now.Add(-time.Duration(100-it.ticket) * time.Minute) // a lower id is older
				d := rules.Decision{Rule: it.rule, TicketID: it.ticket, Ticket: &sdclient.Ticket{ID: it.ticket, Priority: it.prio, CreatedAt: created}}
				ds = append(ds, d)
				if it.waited > 0 {
					since[Key(d)] = now.Add(-it.waited)
				}
				begun[Key(d)] = it.begun
			}
			var got []int64
			for _, d := range Order(set, now, ds, begun, since) {
				got = append(got, d.TicketID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}

// mustRules loads a rules file, named after the test, or fails it.
func mustRules(t testing.TB, yaml string) *rules.Set {
	t.Helper()
	set, err := rules.Load(t.Name()+".yaml", []byte(yaml))
	if err == nil {
		return set
	}
	t.Fatalf("load rules: %v", err)
	return nil
}

// The queue's age across cycles: a decision held back again keeps the
// time it first waited, a newly held one waits from now, one its rule's
// cycle no longer held back stops waiting, and one of a rule not in the
// cycle keeps waiting unless its rule is gone.
func TestWaiting(t *testing.T) {
	set := mustRules(t, makeRules) // urgent alerts (ClassAlert), note writes a note (ClassUpdate)
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	k := func(rule string, id int64) rules.FiringKey { return rules.FiringKey{Rule: rule, TicketID: id} }
	old := map[rules.FiringKey]time.Time{k("urgent", 1): t0, k("urgent", 2): t0, k("note", 3): t0, k("gone", 4): t0}
	held := map[string]map[int64]Held{"urgent": {1: {At: now}, 5: {At: now}}}
	got := Waiting(set, []*rules.Rule{set.Rule("urgent")}, old, held, now)
	want := map[rules.FiringKey]time.Time{k("urgent", 1): t0, k("urgent", 5): now, k("note", 3): t0}
	if len(got) != len(want) {
		t.Fatalf("Waiting = %v, want %v", got, want)
	}
	for key, at := range want {
		if !got[key].Equal(at) {
			t.Errorf("%v waits since %v, want %v", key, got[key], at)
		}
	}
	if c := WaitingByClass(set, got); c[ClassAlert] != 2 || c[ClassUpdate] != 1 {
		t.Errorf("WaitingByClass = %v, want 2 alerts and 1 update", c)
	}
	since := WaitingSince(got, []rules.Decision{{Rule: "urgent", TicketID: 5}, {Rule: "urgent", TicketID: 9}}, map[string][]int64{"note": {3}})
	if len(since) != 2 || !since[k("urgent", 5)].Equal(now) || !since[k("note", 3)].Equal(t0) {
		t.Errorf("WaitingSince = %v, want urgent/5 since now and note/3 since t0", since)
	}
}
