package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

func TestUntil(t *testing.T) {
	now := time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{28 * time.Minute, "in 28 min"},
		{81 * time.Second, "in 1 min"},
		{-61 * time.Second, "1 min ago"},
		{20 * time.Second, "in less than a minute"},
		{-20 * time.Second, "less than a minute ago"},
		{2*time.Hour + 5*time.Minute, "in 2 h 5 min"},
		{3 * time.Hour, "in 3 h"},
		{-(76*time.Hour + 10*time.Minute), "3 days 4 h ago"},
		{72 * time.Hour, "in 3 days"},
	} {
		if got := Until(now.Add(tc.d), now); got != tc.want {
			t.Errorf("Until(now%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// Issue 23, 11: {{ until(ticket.due_by) }} says how long until the due
// date when the text is rendered, so a message held back by a cap says
// what is true when it goes out; and the example's nudge uses it.
func TestUntilInTemplates(t *testing.T) {
	s := loadExample(t)
	nudge := s.Rule("nudge-before-breach")
	due := time.Date(2026, 11, 27, 11, 30, 0, 0, time.UTC)
	tk := &sdclient.Ticket{ID: 7, Subject: "VPN down", Status: 2, Priority: 2, ResponderID: sdclient.Ptr(int64(12)), DueBy: &due,
		CreatedAt: due.Add(-time.Hour), UpdatedAt: due.Add(-time.Hour)}
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{due.Add(-28 * time.Minute), "#7 VPN down breaches in 28 min, at 2026-11-27T11:30:00Z"},
		// Held back by a cap, it went out 81 s before the breach.
		{due.Add(-81 * time.Second), "#7 VPN down breaches in 1 min, at "},
	} {
		ds := s.EvaluateRule(nudge, []*sdclient.Ticket{tk}, tc.now)
		if len(ds) != 1 || ds[0].Err != nil || len(ds[0].Actions) != 1 || !strings.HasPrefix(ds[0].Actions[0].Text, tc.want) {
			t.Fatalf("at %s: %+v, want a text starting %q", tc.now, ds, tc.want)
		}
	}

	set := mustLoad(t, `version: 1
rules:
  - name: late
    query: "priority:4"
    actions:
      - note: "due {{ until(ticket.due_by) }}, first response {{ until(ticket.fr_due_by) }}"
`)
	late := &sdclient.Ticket{ID: 8, Subject: "x", Status: 2, Priority: 4, DueBy: &due, CreatedAt: due.Add(-time.Hour), UpdatedAt: due.Add(-time.Hour)}
	ds := set.Evaluate([]*sdclient.Ticket{late}, due.Add(61*time.Second))
	if len(ds) != 1 || len(ds[0].Actions) != 1 || ds[0].Actions[0].Text != "due 1 min ago, first response no date" {
		t.Fatalf("decisions %+v, want the note \"due 1 min ago, first response no date\"", ds)
	}
}
