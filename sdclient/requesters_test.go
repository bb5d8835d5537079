package sdclient

import (
	"errors"
	"testing"
)

func TestRequesters(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /requesters", "email=ann%40example.com&include_agents=true", "", 200, `{"requesters":[{"id":1,"first_name":"Ann","primary_email":"ann@example.com"}]}`)
	route(t, mux, "POST /requesters", "", `{"first_name":"Cy","primary_email":"cy@example.com"}`, 201, `{"requester":{"id":2,"first_name":"Cy"}}`)
	route(t, mux, "GET /requesters/2", "", "", 200, `{"requester":{"id":2}}`)
	route(t, mux, "PUT /requesters/2", "", `{"department_ids":[4]}`, 200, `{"requester":{"id":2,"department_ids":[4]}}`)

	list, _, err := c.Requesters.List(t.Context(), &RequesterListOptions{Email: "ann@example.com", IncludeAgents: true})
	if err != nil || *list[0].PrimaryEmail != "ann@example.com" {
		t.Fatalf("list: %v", err)
	}
	if r, _, err := c.Requesters.Create(t.Context(), &RequesterRequest{FirstName: Ptr("Cy"), PrimaryEmail: Ptr("cy@example.com")}); err != nil || r.ID != 2 {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Requesters.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if r, _, err := c.Requesters.Update(t.Context(), 2, &RequesterRequest{DepartmentIDs: []int64{4}}); err != nil || r.DepartmentIDs[0] != 4 {
		t.Fatalf("update: %v", err)
	}
	if _, _, err := c.Requesters.Create(t.Context(), &RequesterRequest{FirstName: Ptr("x")}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no contact: %v", err)
	}
}
