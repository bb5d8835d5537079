package sdclient

import (
	"context"
	"iter"
)

// ChangeFilterPage is one page of GET /changes/filter.
type ChangeFilterPage struct {
	Changes []*Change `json:"changes"`
	// Total is how many changes match over all pages, when the desk says.
	Total int `json:"total"`
}

// Filter reads one page of changes matching a filter expression
// (GET /changes/filter?query="..."), validated and encoded like
// Tickets.Filter.
func (s *ChangesService) Filter(ctx context.Context, query string, opts *FilterOptions) (*ChangeFilterPage, *Response, error) {
	return filterPage[ChangeFilterPage](ctx, s.editing.res.client, "filter changes", "changes/filter", query, opts)
}

// FilterAll walks the pages of a change filter like Tickets.FilterAll.
func (s *ChangesService) FilterAll(ctx context.Context, query string, opts *FilterOptions) iter.Seq2[*Change, error] {
	return walkFilter(opts, "filter changes", func(o *FilterOptions) ([]*Change, int, error) {
		p, _, err := s.Filter(ctx, query, o)
		if err != nil {
			return nil, 0, err
		}
		total := p.Total
		if total == 0 && len(p.Changes) > 0 { // no total: page until short/empty
			total = int(^uint(0) >> 1)
		}
		return p.Changes, total, nil
	}, func(c *Change) int64 { return c.ID })
}
