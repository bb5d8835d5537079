package sdclient

import "testing"

func TestVendors(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /vendors", "per_page=100", "", 200, `{"vendors":[{"id":1,"name":"Dell","address":{"city":"Austin"}}]}`)
	var n int
	for v, err := range c.Vendors.ListAll(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if *v.Address.City != "Austin" {
			t.Errorf("vendor %+v", v)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d vendors", n)
	}
}
