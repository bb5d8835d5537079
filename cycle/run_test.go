package cycle

import (
	"slices"
	"testing"

	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/rules"
)

// TestDueRulesInFileOrder: a cycle runs the rules of its due jobs, each
// once, in the rules file's order whatever the jobs' order (cascades are
// noted in that order).
func TestDueRulesInFileOrder(t *testing.T) {
	set := testkit.Rules(t, testkit.NoteRules("a", "b", "c"))
	a, b, c := set.Rule("a"), set.Rule("b"), set.Rule("c")
	for _, tc := range []struct {
		name string
		jobs []Job
		want []string
	}{
		{"none", nil, nil},
		{"one job", []Job{{Name: "b", Rules: []*rules.Rule{b}}}, []string{"b"}},
		{"jobs out of order", []Job{{Name: "c", Rules: []*rules.Rule{c}}, {Name: "a+1", Rules: []*rules.Rule{b, a}}}, []string{"a", "b", "c"}},
		{"a rule in two jobs", []Job{{Name: "a", Rules: []*rules.Rule{a}}, {Name: "a+1", Rules: []*rules.Rule{a, c}}}, []string{"a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(dueRules(set, tc.jobs)); !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
				t.Errorf("due rules %v, want %v", got, tc.want)
			}
		})
	}
}
