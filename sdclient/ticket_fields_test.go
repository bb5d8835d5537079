package sdclient

import (
	"fmt"
	"strings"
	"testing"
)

const formFields = `{"ticket_fields":[
 {"id":1,"name":"subject","field_type":"default_subject","choices":[]},
 {"id":2,"name":"status","label":"Status","field_type":"default_status","default_field":true,"choices":[
  {"id":2,"value":"Open","requester_display_value":"Being Processed"},
  {"id":3,"value":"Pending","requester_display_value":"Awaiting your Reply"},
  {"id":4,"value":"Resolved","requester_display_value":"This ticket has been Resolved"},
  {"id":5,"value":"Closed","requester_display_value":"This ticket has been Closed"},
  {"id":12,"value":"Waiting on vendor","requester_display_value":"Being Processed"},
  {"id":13,"value":"Scheduled","requester_display_value":"Being Processed"}]}]}`

func TestTicketFields(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /ticket_fields", "workspace_id=2", "", 200, formFields)
	route(t, mux, "GET /ticket_form_fields", "", "", 200, formFields)
	ws := int64(2)
	fields, _, err := c.TicketFields.List(t.Context(), &FieldListOptions{WorkspaceID: &ws})
	if err != nil || len(fields) != 2 || fields[1].Choices[4].ID != 12 {
		t.Fatalf("ticket fields: %v", err)
	}
	open, err := c.OpenStatuses(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(open) != "[2 3 12 13]" {
		t.Errorf("open statuses = %v, want [2 3 12 13]", open)
	}
	st, err := c.Statuses(t.Context())
	if err != nil || len(st) != 6 || st[4].Value != "Waiting on vendor" {
		t.Errorf("statuses = %v %v", st, err)
	}
}

func TestOpenStatusesWithoutStatusField(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /ticket_form_fields", "", "", 200, `{"ticket_fields":[{"id":1,"name":"subject"}]}`)
	if _, err := c.OpenStatuses(t.Context()); err == nil || !strings.Contains(err.Error(), `no form field named "status"`) {
		t.Errorf("err = %v", err)
	}
}
