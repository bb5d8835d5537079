package sdclient

// VendorsService reads vendors (GET /vendors): List and ListAll of Vendor
// with ListOptions (crud.go).
type VendorsService struct {
	listing[Vendor, ListOptions, *ListOptions]
}
