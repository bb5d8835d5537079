package sdclient

import (
	"errors"
	"testing"
)

func TestGroups(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /groups", "", "", 200, `{"groups":[{"id":10003024749,"name":"Network","members":[1,2],"unassigned_for":"30m"}]}`)
	route(t, mux, "POST /groups", "", `{"name":"Ops","members":[1]}`, 201, `{"group":{"id":3,"name":"Ops"}}`)
	route(t, mux, "GET /groups/3", "", "", 200, `{"group":{"id":3}}`)
	route(t, mux, "PUT /groups/3", "", `{"description":"night shift"}`, 200, `{"group":{"id":3,"description":"night shift"}}`)
	route(t, mux, "DELETE /groups/3", "", "", 204, "")

	list, _, err := c.Groups.List(t.Context(), nil)
	if err != nil || list[0].ID != 10003024749 || len(list[0].Members) != 2 || *list[0].UnassignedFor != "30m" {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Groups.Create(t.Context(), &GroupRequest{Name: Ptr("Ops"), Members: []int64{1}}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Groups.Get(t.Context(), 3); err != nil {
		t.Fatalf("get: %v", err)
	}
	if g, _, err := c.Groups.Update(t.Context(), 3, &GroupRequest{Description: Ptr("night shift")}); err != nil || *g.Description != "night shift" {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Groups.Delete(t.Context(), 3); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Groups.Create(t.Context(), &GroupRequest{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no name: %v", err)
	}
	if _, _, err := c.Groups.Get(t.Context(), 0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("id 0: %v", err)
	}
}
