package plan

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

const makeRules = `version: 1
channels: {oncall: "#it-oncall"}
rules:
  - name: urgent
    query: "priority:4"
    max_firings_per_cycle: 3
    group_over: 2
    actions: [{alert: {channel: oncall, text: "x"}}]
  - name: note
    query: "priority:1"
    actions: [{note: "checked"}]
`

// Make, from values alone: a failed decision and one the ledger shows
// fired are not admitted; the rule's cap holds the rest back, urgent
// tickets first; a firing under way is added and goes first; a rule over
// its group_over groups its alerts only when the notifier can.
func TestMake(t *testing.T) {
	set := mustRules(t, makeRules)
	now := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	dec := func(rule string, id int64, prio int) rules.Decision {
		r := set.Rule(rule)
		return rules.Decision{Rule: rule, Once: r.Once, TicketID: id, Ticket: &sdclient.Ticket{ID: id, Priority: prio, CreatedAt: now.Add(-time.Duration(id) * time.Minute)}}
	}
	ds := []rules.Decision{dec("urgent", 1, 4), dec("urgent", 2, 4), dec("urgent", 3, 4), dec("urgent", 4, 4), dec("urgent", 5, 4), dec("note", 6, 1)}
	ds[1].Err = fmt.Errorf("if failed")
	led := LedgerView{
		Begun:  map[string][]int64{"note": {9}},
		States: map[string]map[int64]rules.FiringRecord{"urgent": {3: {Open: true, FiringID: 1, State: rules.FiringDone, FiredAt: now.Add(-time.Minute)}}},
	}
	for _, groups := range []bool{true, false} {
		p := Make(Input{Set: set, Now: now, Decisions: ds, Ledger: led, Groups: groups})
		var admitted []string
		for _, d := range p.Ordered {
			if p.Admitted[Key(d)] {
				admitted = append(admitted, fmt.Sprintf("%s/%d", d.Rule, d.TicketID))
			}
		}
		// The firing under way first, then the class order: urgent's
		// alerts (oldest ticket first) before the note, but the fifth
		// place goes to the longest-waiting, oldest decision: the note.
		if want := []string{"note/9", "urgent/5", "urgent/4", "note/6", "urgent/1"}; !slices.Equal(admitted, want) {
			t.Errorf("groups %v: admitted %v, want %v", groups, admitted, want)
		}
		if h, ok := p.Held["urgent"][1]; ok || len(p.Held["urgent"]) != 0 {
			t.Errorf("groups %v: held %v (%v), want none: three fit the cap", groups, p.Held, h)
		}
		if len(p.Failed) != 1 || p.Failed[0].TicketID != 2 || len(p.Fired) != 1 || p.Fired[0].TicketID != 3 {
			t.Errorf("groups %v: failed %v, fired %v; want ticket 2 failed, 3 fired", groups, p.Failed, p.Fired)
		}
		if p.Grouping["urgent"] != groups {
			t.Errorf("groups %v: grouping %v", groups, p.Grouping)
		}
		if !p.Begun[rules.FiringKey{Rule: "note", TicketID: 9}] || slices.Contains(p.Matching["note"], 9) {
			t.Errorf("groups %v: begun %v, matching %v: the firing under way is begun, not matching", groups, p.Begun, p.Matching)
		}
	}
	// A fourth urgent ticket goes over the rule's cap.
	p := Make(Input{Set: set, Now: now, Decisions: append(ds, dec("urgent", 7, 4))})
	if h, ok := p.Held["urgent"][1]; !ok || h.Cap != CapRule || h.Limit != 3 {
		t.Errorf("held %v, want the newest urgent ticket held by the rule's cap of 3", p.Held)
	}
	// A dry run orders and admits nothing.
	if p := Make(Input{Set: set, Now: now, Decisions: ds, DryRun: true}); len(p.Ordered) != len(ds) || len(p.Admitted) != 0 {
		t.Errorf("dry run: ordered %d, admitted %d", len(p.Ordered), len(p.Admitted))
	}
}
