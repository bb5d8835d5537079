package sdclient

import (
	"errors"
	"testing"
)

func TestDepartments(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /departments", "page=3", "", 200, `{"departments":[{"id":1,"name":"IT","domains":["x.com"]}]}`)
	route(t, mux, "POST /departments", "", `{"name":"HR"}`, 201, `{"department":{"id":2,"name":"HR"}}`)
	route(t, mux, "GET /departments/2", "", "", 200, `{"department":{"id":2}}`)
	route(t, mux, "PUT /departments/2", "", `{"head_user_id":5}`, 200, `{"department":{"id":2,"head_user_id":5}}`)
	route(t, mux, "DELETE /departments/2", "", "", 204, "")

	list, _, err := c.Departments.List(t.Context(), &ListOptions{Page: 3})
	if err != nil || list[0].Domains[0] != "x.com" {
		t.Fatalf("list: %v", err)
	}
	if _, _, err := c.Departments.Create(t.Context(), &DepartmentRequest{Name: Ptr("HR")}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := c.Departments.Get(t.Context(), 2); err != nil {
		t.Fatalf("get: %v", err)
	}
	if d, _, err := c.Departments.Update(t.Context(), 2, &DepartmentRequest{HeadUserID: Ptr(int64(5))}); err != nil || *d.HeadUserID != 5 {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Departments.Delete(t.Context(), 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Departments.Create(t.Context(), nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil: %v", err)
	}
}
