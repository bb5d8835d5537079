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
	return listChildren[TimeEntry](ctx, s.client, op, "ticket", ticketID, idPath("tickets", ticketID)+"/time_entries", "time_entries", opts)
}

// ListAll walks every page of a ticket's time entries.
func (s *TimeEntriesService) ListAll(ctx context.Context, ticketID int64, opts *ListOptions) iter.Seq2[*TimeEntry, error] {
	return listAllChildren(ctx, ticketID, opts, s.List)
}
