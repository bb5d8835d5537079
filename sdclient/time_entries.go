package sdclient

import (
	"context"
	"fmt"
	"iter"
)

// TimeEntriesService reads the time logged on tickets
// (GET /tickets/{id}/time_entries).
type TimeEntriesService service

// List reads one page of a ticket's time entries
// (GET /tickets/{id}/time_entries).
func (s *TimeEntriesService) List(ctx context.Context, ticketID int64, opts *ListOptions) ([]*TimeEntry, *Response, error) {
	op := fmt.Sprintf("list time entries of ticket %d", ticketID)
	if ticketID <= 0 {
		return nil, nil, invalid(op, "ticket id must be positive")
	}
	return list[TimeEntry](ctx, s.client, op, idPath("tickets", ticketID)+"/time_entries", "time_entries", opts)
}

// ListAll walks every page of a ticket's time entries.
func (s *TimeEntriesService) ListAll(ctx context.Context, ticketID int64, opts *ListOptions) iter.Seq2[*TimeEntry, error] {
	return listAll(ctx, opts, func(ctx context.Context, o *ListOptions) ([]*TimeEntry, *Response, error) {
		return s.List(ctx, ticketID, o)
	})
}
