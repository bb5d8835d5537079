package sdclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestChanges(t *testing.T) {
	c, mux, _ := setup(t)
	start := time.Date(2025, 3, 27, 13, 0, 0, 0, time.UTC)
	route(t, mux, "GET /changes", "order_type=desc", "", 200, `{"changes":[{"id":1,"subject":"Upgrade","planned_start_date":"2018-03-27T13:00:00.999Z","agent_id":null}]}`)
	route(t, mux, "POST /changes", "", `{"subject":"Patch","requester_id":4,"planned_start_date":"2025-03-27T13:00:00Z"}`, 201, `{"change":{"id":2,"subject":"Patch"}}`)
	route(t, mux, "GET /changes/2", "", "", 200, `{"change":{"id":2,"planned_start_date":"2025-03-27T18:30:00+05:30"}}`)
	route(t, mux, "PUT /changes/2", "", `{"status":3}`, 200, `{"change":{"id":2,"status":3}}`)
	route(t, mux, "DELETE /changes/2", "", "", 204, "")

	list, _, err := c.Changes.List(t.Context(), &ChangeListOptions{OrderType: "desc"})
	if err != nil || list[0].PlannedStartDate == nil || list[0].AgentID != nil {
		t.Fatalf("list: %v %+v", err, list)
	}
	if _, _, err := c.Changes.Create(t.Context(), &ChangeRequest{Subject: Ptr("Patch"), RequesterID: Ptr(int64(4)), PlannedStartDate: &start}); err != nil {
		t.Fatalf("create: %v", err)
	}
	ch, _, err := c.Changes.Get(t.Context(), 2)
	if err != nil || !ch.PlannedStartDate.Equal(time.Date(2025, 3, 27, 13, 0, 0, 0, time.UTC)) {
		t.Fatalf("get: %v %+v", err, ch)
	}
	if ch, _, err := c.Changes.Update(t.Context(), 2, &ChangeRequest{Status: Ptr(3)}); err != nil || ch.Status != 3 {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Changes.Delete(t.Context(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Changes.Create(t.Context(), &ChangeRequest{Subject: Ptr("x")}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no requester: %v", err)
	}
}

func TestChangesFilter(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /changes/filter", func(w http.ResponseWriter, r *http.Request) {
		raw := r.URL.RawQuery
		q, rest, _ := strings.Cut(strings.TrimPrefix(raw, "query="), "&")
		val, _ := url.QueryUnescape(q)
		if strings.Contains(raw, "+") || val != `"priority:4 AND status:1"` {
			t.Errorf("raw query %s (value %s)", raw, val)
		}
		switch rest {
		case "page=1":
			writeJSON(w, 200, `{"changes":[{"id":1},{"id":2}],"total":3}`)
		case "page=2":
			writeJSON(w, 200, `{"changes":[{"id":3}],"total":3}`)
		default:
			t.Errorf("rest %q", rest)
		}
	})
	page, _, err := c.Changes.Filter(t.Context(), "priority:4 AND status:1", &FilterOptions{Page: 1})
	if err != nil || page.Total != 3 || len(page.Changes) != 2 {
		t.Fatalf("filter: %v %+v", err, page)
	}
	var ids []int64
	for ch, err := range c.Changes.FilterAll(t.Context(), "priority:4 AND status:1", nil) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ch.ID)
	}
	if fmt.Sprint(ids) != "[1 2 3]" {
		t.Errorf("ids %v", ids)
	}
	if _, _, err := c.Changes.Filter(t.Context(), "priority:", nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad query: %v", err)
	}
}
