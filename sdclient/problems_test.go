package sdclient

import (
	"errors"
	"testing"
)

func TestProblems(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /problems", "per_page=5", "", 200, `{"problems":[{"id":1,"known_error":true,"due_by":null}]}`)
	route(t, mux, "POST /problems", "", `{"subject":"Flaky VPN","email":"ann@example.com","impact":2}`, 201, `{"problem":{"id":2}}`)
	route(t, mux, "GET /problems/2", "", "", 200, `{"problem":{"id":2}}`)
	route(t, mux, "PUT /problems/2", "", `{"known_error":false}`, 200, `{"problem":{"id":2,"known_error":false}}`)
	route(t, mux, "DELETE /problems/2", "", "", 204, "")

	list, _, err := c.Problems.List(t.Context(), &ListOptions{PerPage: 5})
	if err != nil || !list[0].KnownError || list[0].DueBy != nil {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Problems.Create(t.Context(), &ProblemRequest{Subject: Ptr("Flaky VPN"), Email: Ptr("ann@example.com"), Impact: Ptr(2)}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Problems.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if _, _, err := c.Problems.Update(t.Context(), 2, &ProblemRequest{KnownError: Ptr(false)}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Problems.Delete(t.Context(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Problems.Create(t.Context(), &ProblemRequest{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty: %v", err)
	}
}
