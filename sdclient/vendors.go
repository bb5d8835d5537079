package sdclient

import (
	"context"
	"iter"
)

// VendorsService reads vendors (GET /vendors).
type VendorsService service

// List reads one page of vendors (GET /vendors).
func (s *VendorsService) List(ctx context.Context, opts *ListOptions) ([]*Vendor, *Response, error) {
	return list[Vendor](ctx, s.client, "list vendors", "vendors", "vendors", opts)
}

// ListAll walks every page of vendors.
func (s *VendorsService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*Vendor, error] {
	return listAll(ctx, opts, s.List)
}
