package sdclient

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
)

const recordTicket = `{"id":7,"workspace_id":3,"status":12,"priority":4,"source":10,"urgency":2,"impact":null,
 "type":"Incident","requester_id":55,"responder_id":null,"group_id":8,"department_id":null,
 "due_by":"2025-05-02T10:00:00Z","fr_due_by":null,"tags":["vip","network"],
 "custom_fields":{"floor":3,"on_site":true,"region":"emea","note":null,"ratio":1.5,"multi":["a","b"]},
 "created_at":"2025-05-01T08:00:00Z","updated_at":"2025-05-01T09:30:00Z"}`

func TestTicketFilterValues(t *testing.T) {
	tk := decodeRecordTicket(t)
	cases := []struct {
		field string
		want  []filter.Value
	}{
		{"agent_id", nil},
		{"group_id", []filter.Value{filter.Number(8)}},
		{"requester_id", []filter.Value{filter.Number(55)}},
		{"department_id", nil},
		{"priority", []filter.Value{filter.Number(4)}},
		{"status", []filter.Value{filter.Number(12)}},
		{"source", []filter.Value{filter.Number(10)}},
		{"urgency", []filter.Value{filter.Number(2)}},
		{"impact", nil},
		{"type", []filter.Value{filter.String("Incident")}},
		{"tag", []filter.Value{filter.String("vip"), filter.String("network")}},
		{"workspace_id", []filter.Value{filter.Number(3)}},
		{"created_at", []filter.Value{filter.DateTime(time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC))}},
		{"updated_at", []filter.Value{filter.DateTime(time.Date(2025, 5, 1, 9, 30, 0, 0, time.UTC))}},
		{"due_by", []filter.Value{filter.DateTime(time.Date(2025, 5, 2, 10, 0, 0, 0, time.UTC))}},
		{"fr_due_by", nil},
		{"floor", []filter.Value{filter.Number(3)}},
		{"on_site", []filter.Value{filter.Bool(true)}},
		{"region", []filter.Value{filter.String("emea")}},
		{"note", []filter.Value{filter.Null()}},
		{"ratio", []filter.Value{filter.String("1.5")}},
		{"multi", []filter.Value{filter.String("a"), filter.String("b")}},
		{"no_such_field", nil},
	}
	for _, tc := range cases {
		got := tk.FilterValues(tc.field)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || len(got) != len(tc.want) {
			t.Errorf("%s = %v, want %v", tc.field, got, tc.want)
		}
	}
}

func TestTicketEvalAgainstFilter(t *testing.T) {
	tk := decodeRecordTicket(t)
	cases := []struct {
		q    string
		want bool
	}{
		{"agent_id:null", true},
		{"agent_id:0", true},
		{"agent_id:5", false},
		{"priority:4 AND (status:2 OR status:12)", true},
		{"group_id:8 AND tag:'network'", true},
		{"tag:'other'", false},
		{"created_at:>'2025-05-01'", true},
		{"created_at:<'2025-04-30'", false},
		{"floor:3 AND on_site:true", true},
		{"region:'apac'", false},
	}
	for _, tc := range cases {
		e, err := filter.Parse(tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		if got := e.Eval(&tk); got != tc.want {
			t.Errorf("%s on ticket = %v, want %v", tc.q, got, tc.want)
		}
	}
	// Assigning the ticket changes agent_id:null.
	tk.ResponderID = Ptr(int64(5))
	e, _ := filter.Parse("agent_id:5")
	if !e.Eval(&tk) {
		t.Error("agent_id:5 does not match an assigned ticket")
	}
}

// decodeRecordTicket is recordTicket as the client decodes it.
func decodeRecordTicket(t *testing.T) Ticket {
	t.Helper()
	var tk Ticket
	if err := json.Unmarshal([]byte(recordTicket), &tk); err != nil {
		t.Fatal(err)
	}
	return tk
}
