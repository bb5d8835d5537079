package sdclient

import (
	"errors"
	"testing"
)

func TestTimeEntries(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /tickets/42/time_entries", "", "", 200, `{"time_entries":[{"id":1,"agent_id":3,"time_spent":"03:00","timer_running":false,"billable":true,"task_id":null}]}`)
	list, _, err := c.TimeEntries.List(t.Context(), 42, nil)
	if err != nil || list[0].TimeSpent != "03:00" || !list[0].Billable || list[0].TaskID != nil {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.TimeEntries.List(t.Context(), 0, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("ticket 0: %v", err)
	}
}
