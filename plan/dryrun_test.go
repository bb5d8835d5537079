package plan

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
)

// A dry run's memory: what it would have fired counts as fired per the
// rule's once:, until a complete cycle of the rule no longer decides the
// ticket; a once: ticket rule's memory never ends.
func TestDryMemory(t *testing.T) {
	set := mustRules(t, `version: 1
rules:
  - name: note
    query: "priority:1"
    actions: [{note: "checked"}]
  - name: forever
    query: "priority:1"
    once: ticket
    actions: [{note: "once"}]
  - name: other
    query: "priority:2"
    actions: [{note: "other"}]
`)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	dec := func(rule string, id int64) rules.Decision {
		return rules.Decision{Rule: rule, TicketID: id, Once: set.Rule(rule).Once}
	}
	m := DryMemory{}
	if _, known := m.Fired(dec("note", 1), now); known {
		t.Fatal("an empty memory knows a firing")
	}
	m[Key(dec("note", 1))], m[Key(dec("forever", 1))], m[Key(dec("other", 2))] = now, now, now
	if fired, known := m.Fired(dec("note", 1), now.Add(time.Hour)); !known || !fired {
		t.Errorf("note on #1 an hour later: fired %v, known %v; want fired (once per episode)", fired, known)
	}
	// A complete cycle of note and forever that no longer decides #1;
	// other did not run.
	m.EndEpisodes(set, []*rules.Rule{set.Rule("note"), set.Rule("forever")}, nil)
	for _, c := range []struct {
		key  rules.FiringKey
		kept bool
	}{
		{Key(dec("note", 1)), false},
		{Key(dec("forever", 1)), true},
		{Key(dec("other", 2)), true},
	} {
		if _, ok := m[c.key]; ok != c.kept {
			t.Errorf("%v kept: %v, want %v", c.key, ok, c.kept)
		}
	}
}
