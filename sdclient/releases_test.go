package sdclient

import (
	"errors"
	"testing"
	"time"
)

func TestReleases(t *testing.T) {
	c, mux, _ := setup(t)
	s, e := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 2, 0, 0, 0, 0, time.UTC)
	route(t, mux, "GET /releases", "", "", 200, `{"releases":[{"id":1,"release_type":2,"work_start_date":null}]}`)
	route(t, mux, "POST /releases", "", `{"subject":"Q2","planned_start_date":"2025-04-01T00:00:00Z","planned_end_date":"2025-04-02T00:00:00Z"}`, 201, `{"release":{"id":2}}`)
	route(t, mux, "GET /releases/2", "", "", 200, `{"release":{"id":2}}`)
	route(t, mux, "PUT /releases/2", "", `{"status":5}`, 200, `{"release":{"id":2,"status":5}}`)
	route(t, mux, "DELETE /releases/2", "", "", 204, "")

	list, _, err := c.Releases.List(t.Context(), nil)
	if err != nil || list[0].ReleaseType != 2 {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Releases.Create(t.Context(), &ReleaseRequest{Subject: Ptr("Q2"), PlannedStartDate: &s, PlannedEndDate: &e}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Releases.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if r, _, err := c.Releases.Update(t.Context(), 2, &ReleaseRequest{Status: Ptr(5)}); err != nil || r.Status != 5 {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Releases.Delete(t.Context(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Releases.Create(t.Context(), &ReleaseRequest{Subject: Ptr("x")}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no dates: %v", err)
	}
}
