package sdclient

// ProductsService reads the product catalogue (GET /products): List and
// ListAll of Product with ListOptions (crud.go).
type ProductsService struct {
	listing[Product, ListOptions, *ListOptions]
}
