package sdclient

import (
	"context"
	"iter"
)

// CannedResponsesService reads canned responses (GET /canned_responses).
type CannedResponsesService service

// List reads one page of canned responses (GET /canned_responses).
func (s *CannedResponsesService) List(ctx context.Context, opts *ListOptions) ([]*CannedResponse, *Response, error) {
	return list[CannedResponse](ctx, s.client, "list canned responses", "canned_responses", "canned_responses", opts)
}

// ListAll walks every page of canned responses.
func (s *CannedResponsesService) ListAll(ctx context.Context, opts *ListOptions) iter.Seq2[*CannedResponse, error] {
	return listAll(ctx, opts, s.List)
}
