package sdclient

import "testing"

func TestProducts(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /products", "page=2", "", 200, `{"products":[{"id":1,"name":"MacBook","manufacturer":"Apple","asset_type_id":5}]}`)
	list, _, err := c.Products.List(t.Context(), &ListOptions{Page: 2})
	if err != nil || *list[0].Manufacturer != "Apple" || *list[0].AssetTypeID != 5 {
		t.Fatalf("list: %v", err)
	}
}
