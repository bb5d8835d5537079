package plan

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// The status pages' record of a cycle: every rule due has an entry (an
// empty one when it matched nothing), its tickets in order, its failures
// with why; a decision of a rule not due is not recorded. What was held
// back lists in ticket order.
func TestMatchesAndHeldTickets(t *testing.T) {
	set := mustRules(t, makeRules)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	got := Matches([]*rules.Rule{set.Rule("urgent"), set.Rule("note")}, []rules.Decision{
		{Rule: "urgent", TicketID: 9}, {Rule: "urgent", TicketID: 3}, {Rule: "urgent", TicketID: 4, Err: errors.New("bad field")},
		{Rule: "other", TicketID: 1},
	}, now)
	if len(got) != 2 || !got["note"].At.Equal(now) || len(got["note"].Tickets) != 0 {
		t.Fatalf("Matches = %+v, want urgent and an empty note", got)
	}
	if u := got["urgent"]; !slices.Equal(u.Tickets, []int64{3, 9}) || u.Failed[4] != "bad field" {
		t.Errorf("urgent's matches = %+v, want #3 and #9, #4 failed", u)
	}
	held := HeldTickets(map[string]map[int64]Held{"urgent": {7: {Cap: CapRule}, 2: {Cap: CapCycle}}})
	if h := held["urgent"]; len(h) != 2 || h[0].TicketID != 2 || h[0].Cap != CapCycle || h[1].TicketID != 7 {
		t.Errorf("HeldTickets = %+v, want #2 (cycle cap) then #7", h)
	}
}

// MergeHeld lists what the caps held back and what the queue left, per
// rule, without changing either.
func TestMergeHeld(t *testing.T) {
	capped := map[string]map[int64]Held{"a": {1: {Cap: CapRule}}}
	queued := map[string]map[int64]Held{"a": {2: {Cap: CapQueue}}, "b": {3: {Cap: CapQueue}}}
	got := MergeHeld(capped, queued)
	if len(got["a"]) != 2 || got["a"][1].Cap != CapRule || got["a"][2].Cap != CapQueue || got["b"][3].Cap != CapQueue {
		t.Errorf("MergeHeld = %v", got)
	}
	if len(capped["a"]) != 1 {
		t.Errorf("MergeHeld changed its input: %v", capped)
	}
}
