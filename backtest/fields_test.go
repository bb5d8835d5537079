package backtest

import (
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
)

// TestChanged holds changed to the classes of the fields a change
// changed: a rule is asked again about a changed ticket only when one of
// the classes it reads is among them.
func TestChanged(t *testing.T) {
	at := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	base := sdclient.Ticket{ID: 1, Subject: "printer", Status: 2, Priority: 1, GroupID: ptr(int64(3)), Tags: []string{"vip"},
		DueBy: ptr(at.Add(4 * time.Hour)), CreatedAt: at, UpdatedAt: at}
	all := []fieldClass{fieldStatus | fieldOther, fieldDue | fieldQueue | fieldOther} // rules reading the rest: its DeepEqual is asked
	cases := []struct {
		name   string
		change func(*sdclient.Ticket)
		want   fieldClass
	}{
		{"nothing", func(*sdclient.Ticket) {}, 0},
		{"status", func(t *sdclient.Ticket) { t.Status = 3 }, fieldStatus},
		{"priority", func(t *sdclient.Ticket) { t.Priority = 4 }, fieldQueue},
		{"group", func(t *sdclient.Ticket) { t.GroupID = ptr(int64(4)) }, fieldGroup},
		{"the same group, another pointer", func(t *sdclient.Ticket) { t.GroupID = ptr(int64(3)) }, 0},
		{"agent", func(t *sdclient.Ticket) { t.ResponderID = ptr(int64(7)) }, fieldResponder},
		{"tags", func(t *sdclient.Ticket) { t.Tags = []string{"vip", "network"} }, fieldTags},
		{"updated", func(t *sdclient.Ticket) { t.UpdatedAt = at.Add(time.Minute) }, fieldUpdated},
		{"due date", func(t *sdclient.Ticket) { t.DueBy = ptr(at.Add(8 * time.Hour)) }, fieldDue},
		{"due date gone", func(t *sdclient.Ticket) { t.DueBy = nil }, fieldDue},
		{"first response due", func(t *sdclient.Ticket) { t.FrDueBy = ptr(at) }, fieldDue},
		{"subject", func(t *sdclient.Ticket) { t.Subject = "scanner" }, fieldSubject},
		{"source", func(t *sdclient.Ticket) { t.Source = 3 }, fieldOther},
		{"custom field", func(t *sdclient.Ticket) { t.CustomFields = map[string]any{"seats": 3} }, fieldOther},
		{"due date and type", func(t *sdclient.Ticket) { t.DueBy, t.Type = nil, "Incident" }, fieldDue | fieldOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base, base
			tc.change(&b)
			var rest sdclient.Ticket
			if got := changed(&a, &b, all, &rest); got != tc.want {
				t.Errorf("changed = %010b, want %010b", got, tc.want)
			}
		})
	}
}

// TestReadsOf holds readsOf to the classes of the fields a rule, and its
// query, read.
func TestReadsOf(t *testing.T) {
	set, err := rules.Load("reads.yaml", []byte(`version: 1
rules:
  - name: sla
    query: "status:open"
    if: 'has_due(ticket) && ticket.due_by < now()'
    actions: [{note: "late"}]
  - name: subject
    query: "status:open AND tag:'vip'"
    if: 'ticket.subject == "x"'
    actions: [{note: "x"}]
  - name: source
    query: "status:open"
    actions: [{alert: {channel: "#desk", text: "from {{ ticket.source }}"}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]fieldClass{
		"sla":     {fieldStatus | fieldQueue | fieldDue, fieldStatus},
		"subject": {fieldStatus | fieldQueue | fieldTags | fieldSubject, fieldStatus | fieldTags},
		"source":  {fieldStatus | fieldQueue | fieldOther, fieldStatus},
	} {
		if reads, query := readsOf(set.Rule(name)); reads != want[0] || query != want[1] {
			t.Errorf("%s reads %010b, its query %010b; want %010b, %010b", name, reads, query, want[0], want[1])
		}
	}
}
