package sdclient

import (
	"context"
	"iter"
)

// ProductsService reads the product catalogue (GET /products).
type ProductsService service

// List reads one page of products (GET /products).
func (s *ProductsService) List(ctx context.Context, opts *ListOptions) ([]*Product, *Response, error) {
	return list[Product](ctx, s.client, "list products", "products", "products", opts)
}

// ListAll walks every page of products.
func (s *ProductsService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*Product, error] {
	return listAll(ctx, opts, s.List)
}
