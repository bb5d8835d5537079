package planreport

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
)

// The header says what a full sync read when the plan made one (the
// command) and nothing when the plan comes from a running scheduler's
// memory (the status page), whose full sync it did not measure.
func TestReportHeader(t *testing.T) {
	set, err := rules.Load("rules.yaml", []byte("version: 1\nrules:\n  - {name: r, query: \"priority:4\", actions: [{note: n}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		full       int
		head, sync string
	}{
		{3, "Plan for src: 1 rule on 250 tickets mirrored (3 requests read them), at 2026-11-27T09:00:00Z.", "full sync: 3 requests every "},
		{0, "Plan for src: 1 rule on 250 tickets mirrored, at 2026-11-27T09:00:00Z.", "not counted here"},
	} {
		rep := Report{
			Source: "src", Set: set, Outlook: plan.Outlook{At: at, Tick: time.Minute, Rules: []plan.RuleOutlook{{Rule: set.Rule("r"), Next: at}}},
			Cycle: scheduler.Cycle{Sync: &feed.Synced{Tickets: 250, FullSyncRequests: tc.full}}, Workspaces: 1, Budget: 48, Rate: 60,
		}
		var b strings.Builder
		if err := rep.Write(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.HasPrefix(out, tc.head+"\n") || !strings.Contains(out, tc.sync) || !strings.Contains(out, "rule r (every 1m") {
			t.Errorf("full sync of %d requests:\n%s", tc.full, out)
		}
	}
}

// A rule whose firings all wait because the cap across rules went to the
// rules before it says so, instead of what its first cycle posts.
func TestReportRuleLeftNoneByTheCycleCap(t *testing.T) {
	set, err := rules.Load("rules.yaml", []byte("version: 1\nrules:\n  - {name: a, query: \"priority:4\", actions: [{note: n}]}\n  - {name: b, query: \"priority:3\", actions: [{note: n}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	note := []rules.Action{{Kind: rules.ActionNote, Text: "n"}}
	d := func(rule string, id int64) rules.Decision {
		return rules.Decision{Rule: rule, TicketID: id, Actions: note}
	}
	rep := Report{
		Source: "src", Set: set, Workspaces: 1, Budget: 48, Rate: 60,
		Cycle: scheduler.Cycle{Sync: &feed.Synced{Tickets: 3, FullSyncRequests: 1}},
		Outlook: plan.Outlook{At: at, Tick: time.Minute, CycleCap: 2, Rules: []plan.RuleOutlook{
			{Rule: set.Rule("a"), Next: at, Fires: []rules.Decision{d("a", 1), d("a", 2)}, Waves: []int{2}},
			{Rule: set.Rule("b"), Next: at, Fires: []rules.Decision{d("b", 3)}, Waves: []int{0, 1}},
		}},
	}
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		t.Fatal(err)
	}
	if want := "first run: fires on none now: the cap across rules goes to the rules before it; its first firings start 1 cycle later"; !strings.Contains(b.String(), want) {
		t.Errorf("want %q in:\n%s", want, b.String())
	}
}
