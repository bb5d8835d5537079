package sdclient

import (
	"errors"
	"testing"
)

func TestAssets(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /assets", "include=type_fields&per_page=100", "", 200, `{"assets":[{"id":1,"display_id":17,"name":"Laptop","type_fields":{"ram":16}}]}`)
	route(t, mux, "POST /assets", "", `{"name":"Laptop","asset_type_id":5}`, 201, `{"asset":{"id":2,"display_id":18,"name":"Laptop","asset_type_id":5}}`)
	route(t, mux, "GET /assets/18", "", "", 200, `{"asset":{"id":2,"display_id":18}}`)
	route(t, mux, "PUT /assets/18", "", `{"user_id":9}`, 200, `{"asset":{"id":2,"display_id":18,"user_id":9}}`)
	route(t, mux, "DELETE /assets/18", "", "", 204, "")

	list, _, err := c.Assets.List(t.Context(), &AssetListOptions{Include: "type_fields", ListOptions: ListOptions{PerPage: 100}})
	if err != nil || list[0].DisplayID != 17 || list[0].TypeFields["ram"] != float64(16) {
		t.Fatalf("list: %v %+v", err, list)
	}
	a, _, err := c.Assets.Create(t.Context(), &AssetRequest{Name: Ptr("Laptop"), AssetTypeID: Ptr(int64(5))})
	if err != nil || a.DisplayID != 18 {
		t.Fatalf("create: %v", err)
	}
	if a, _, err = c.Assets.Get(t.Context(), 18); err != nil || a.ID != 2 {
		t.Fatalf("get: %v", err)
	}
	if a, _, err = c.Assets.Update(t.Context(), 18, &AssetRequest{UserID: Ptr(int64(9))}); err != nil || *a.UserID != 9 {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Assets.Delete(t.Context(), 18); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Assets.Create(t.Context(), &AssetRequest{Name: Ptr("x")}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("create without type: %v", err)
	}
	if _, _, err := c.Assets.Update(t.Context(), 18, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil update: %v", err)
	}
	var n int
	for _, err := range c.Assets.ListAll(t.Context(), &AssetListOptions{Include: "type_fields"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("ListAll gave %d", n)
	}
}
