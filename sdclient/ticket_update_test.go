package sdclient

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTicketUpdateMarshalJSON(t *testing.T) {
	due := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		in   TicketUpdate
		want string
	}{
		{"nothing", TicketUpdate{}, `{}`},
		{"unassign", TicketUpdate{ResponderID: Ptr(int64(0))}, `{"responder_id":null}`},
		{"clear group", TicketUpdate{GroupID: Ptr(int64(0))}, `{"group_id":null}`},
		{"assign", TicketUpdate{ResponderID: Ptr(int64(21004158707)), GroupID: Ptr(int64(7))}, `{"group_id":7,"responder_id":21004158707}`},
		{"zero status is sent", TicketUpdate{Status: Ptr(0)}, `{"status":0}`},
		{"department 0 stays 0", TicketUpdate{DepartmentID: Ptr(int64(0))}, `{"department_id":0}`},
		{"empty tags replace", TicketUpdate{Tags: &[]string{}}, `{"tags":[]}`},
		{"due and custom", TicketUpdate{DueBy: &due, CustomFields: map[string]any{"floor": 2}}, `{"due_by":"2025-06-01T09:00:00Z","custom_fields":{"floor":2}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []any{tc.in, &tc.in} {
				got, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var g, w any
				json.Unmarshal(got, &g)
				json.Unmarshal([]byte(tc.want), &w)
				if string(mustJSON(g)) != string(mustJSON(w)) {
					t.Errorf("got %s, want %s", got, tc.want)
				}
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
