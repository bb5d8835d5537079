package sdsim_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// Every field the filter schema accepts must be able to match: a field the
// desk validates but then never matches would make a rule silently fire on
// nothing. Tickets are created over HTTP so that values take the JSON path
// (custom numbers arrive as float64, dates as strings).
func TestFilterHonoursEveryField(t *testing.T) {
	sd := newSeeded(t)
	d := sd.s.Desk
	d.AddCustomField(sdsim.CustomField{Name: "environment", Kind: sdsim.FieldString, Choices: []string{"Production", "Staging"}})
	d.AddCustomField(sdsim.CustomField{Name: "seats", Kind: sdsim.FieldNumber})
	d.AddCustomField(sdsim.CustomField{Name: "vip", Kind: sdsim.FieldBool})
	d.AddCustomField(sdsim.CustomField{Name: "go_live", Kind: sdsim.FieldDate})
	dep := d.AddDepartment(sdsim.Department{Name: "Finance"})
	other := d.AddRequester(sdsim.Requester{FirstName: "Olga", PrimaryEmail: "olga@example.com"})

	create := func(body string) int64 {
		t.Helper()
		r := do(t, sd.s, req{method: "POST", path: "/tickets", body: body}).want(t, 201)
		return num(r.obj("ticket")["id"])
	}
	a := create(fmt.Sprintf(`{"email":"rita@example.com","subject":"a","status":3,"priority":4,"source":2,
		"urgency":3,"impact":2,"type":"Service Request","responder_id":%d,"group_id":%d,"department_id":%d,
		"tags":["vpn"],"due_by":"2026-03-20T10:00:00Z","fr_due_by":"2026-03-15T10:00:00Z",
		"custom_fields":{"environment":"Production","seats":12,"vip":true,"go_live":"2026-05-01"}}`,
		sd.agent.ID, sd.group.ID, dep.ID))
	sd.clock.Advance(72 * time.Hour)
	b := create(fmt.Sprintf(`{"requester_id":%d,"subject":"b","status":2,"priority":1,"source":1,
		"type":"Incident","due_by":"2026-04-20T10:00:00Z","fr_due_by":"2026-04-15T10:00:00Z",
		"custom_fields":{"environment":"Staging","seats":3,"vip":false,"go_live":"2026-07-01"}}`, other.ID))

	cases := map[string][]struct {
		query string
		want  []int64
	}{
		"workspace_id":  {{fmt.Sprintf("workspace_id:%d AND priority:4", sdsim.DefaultWorkspaceID), []int64{a}}},
		"requester_id":  {{fmt.Sprintf("requester_id:%d", other.ID), []int64{b}}},
		"email":         {{"email:'rita@example.com'", []int64{a}}, {"email:'OLGA@example.com'", []int64{b}}},
		"agent_id":      {{fmt.Sprintf("agent_id:%d", sd.agent.ID), []int64{a}}, {"agent_id:null", []int64{b}}},
		"group_id":      {{fmt.Sprintf("group_id:%d", sd.group.ID), []int64{a}}, {"group_id:null", []int64{b}}},
		"department_id": {{fmt.Sprintf("department_id:%d", dep.ID), []int64{a}}, {"department_id:null", []int64{b}}},
		"priority":      {{"priority:>3", []int64{a}}},
		"status":        {{"status:2", []int64{b}}},
		"impact":        {{"impact:2", []int64{a}}},
		"urgency":       {{"urgency:3", []int64{a}}},
		"source":        {{"source:2", []int64{a}}, {"source:1", []int64{b}}},
		"type":          {{"type:'Service Request'", []int64{a}}, {"type:'Incident'", []int64{b}}},
		"tag":           {{"tag:'vpn'", []int64{a}}, {"tag:null", []int64{b}}},
		"due_by":        {{"due_by:<'2026-03-20'", []int64{a}}, {"due_by:>'2026-04-01'", []int64{b}}},
		"fr_due_by":     {{"fr_due_by:'2026-03-15'", []int64{a}}, {"fr_due_by:>'2026-04-15'", []int64{b}}},
		"created_at":    {{"created_at:<'2026-03-10'", []int64{a}}, {"created_at:>'2026-03-13'", []int64{b}}},
		"updated_at":    {{"updated_at:'2026-03-13'", []int64{b}}},
		"environment":   {{"environment:'Production'", []int64{a}}, {"environment:'staging'", []int64{b}}},
		"seats":         {{"seats:>10", []int64{a}}, {"seats:3", []int64{b}}},
		"vip":           {{"vip:true", []int64{a}}, {"vip:false", []int64{b}}},
		"go_live":       {{"go_live:'2026-05-01'", []int64{a}}, {"go_live:>'2026-06-01'", []int64{b}}},
	}
	// A fraction in a number field is refused, not stored to match its
	// integer part (seats:12 finding a ticket with 12.5 seats).
	r := do(t, sd.s, req{method: "POST", path: "/tickets", body: `{"email":"rita@example.com","custom_fields":{"seats":12.5}}`})
	if r.want(t, 400).fieldErr("seats") != "invalid_value" {
		t.Errorf("seats 12.5: %s", r.raw)
	}
	schema := filter.TicketSchema(map[string]filter.Kind{"environment": filter.KindString,
		"seats": filter.KindNumber, "vip": filter.KindBool, "go_live": filter.KindDate})
	for _, f := range schema.Fields() {
		if _, ok := cases[f.Name]; !ok {
			t.Errorf("schema field %s has no case here: add one", f.Name)
		}
	}
	for field, cs := range cases {
		for _, c := range cs {
			t.Run(field+"/"+c.query, func(t *testing.T) {
				r := get(t, sd.s, filterPath(c.query, "")).want(t, 200)
				if got := ids(r.list("tickets")); !slices.Equal(got, c.want) {
					t.Errorf("%s matched %v, want %v (a=%d b=%d)", c.query, got, c.want, a, b)
				}
			})
		}
	}
}
