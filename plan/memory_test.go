package plan

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// A ticket keeps the time it began to match while consecutive evaluations
// match it and starts afresh once one did not; the memory's decisions and
// matches are the last evaluation's, and a rule no longer in the set is
// left out of the matches.
func TestMatchMemory(t *testing.T) {
	set := mustRules(t, makeRules)
	urgent := []*rules.Rule{set.Rule("urgent")}
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var m MatchMemory
	if got := m.Since("urgent", 1, t0); !got.Equal(t0) {
		t.Fatalf("Since before any evaluation = %v, want %v", got, t0)
	}
	m.Note(urgent, []rules.Decision{{Rule: "urgent", TicketID: 1}, {Rule: "urgent", TicketID: 2}}, t0)
	m.Note(urgent, []rules.Decision{{Rule: "urgent", TicketID: 1}}, t0.Add(time.Minute))
	m.Note(urgent, []rules.Decision{{Rule: "urgent", TicketID: 1}, {Rule: "urgent", TicketID: 2}}, t0.Add(2*time.Minute))
	late := t0.Add(time.Hour)
	for _, c := range []struct {
		id   int64
		at   time.Time
		want time.Time
	}{
		{1, late, t0},                      // matched in every evaluation
		{2, late, t0.Add(2 * time.Minute)}, // missed one: starts afresh
		{3, late, late},                    // never matched
		{1, t0.Add(-time.Second), t0.Add(-time.Second)}, // not before at
	} {
		if got := m.Since("urgent", c.id, c.at); !got.Equal(c.want) {
			t.Errorf("Since(#%d, %v) = %v, want %v", c.id, c.at, got, c.want)
		}
	}
	if ds := m.Decisions(set); len(ds) != 2 || ds[0].TicketID != 1 || ds[1].TicketID != 2 {
		t.Errorf("Decisions = %+v, want the last evaluation's #1 and #2", ds)
	}
	if ms := m.Matches(set); len(ms["urgent"].Tickets) != 2 || !ms["urgent"].At.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("Matches = %+v, want urgent's last evaluation", ms)
	}
	if ms := m.Matches(mustRules(t, "version: 1\nrules:\n  - name: other\n    query: \"priority:1\"\n    actions: [{note: \"x\"}]\n")); len(ms) != 0 {
		t.Errorf("Matches after the rule was removed = %+v, want none", ms)
	}
}

// A rule's held-back decisions are its last cycle's: a cycle of the rule
// that held nothing back forgets them, one of another rule keeps them.
func TestHeldMemory(t *testing.T) {
	set := mustRules(t, makeRules)
	urgent, note := []*rules.Rule{set.Rule("urgent")}, []*rules.Rule{set.Rule("note")}
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	capped := Held{At: t0, Cap: CapRule, Limit: 3}
	var m HeldMemory
	m.Note(urgent, map[string]map[int64]Held{"urgent": {7: capped}})
	m.Note(note, nil)
	if h, ok := m.HeldBack(rules.FiringKey{Rule: "urgent", TicketID: 7}); !ok || h != capped {
		t.Fatalf("HeldBack(urgent #7) after a cycle of another rule = %+v %v, want %+v", h, ok, capped)
	}
	if got := m.Tickets(); len(got["urgent"]) != 1 || got["urgent"][0].TicketID != 7 {
		t.Errorf("Tickets = %+v, want urgent #7", got)
	}
	m.Note(urgent, map[string]map[int64]Held{})
	if _, ok := m.HeldBack(rules.FiringKey{Rule: "urgent", TicketID: 7}); ok {
		t.Error("HeldBack(urgent #7) after a cycle of the rule that held nothing back: still held")
	}
}
