package bot

import (
	"context"

	"github.com/deskbot/deskbot/sdclient"
)

var _ ThreadDesk = (*DeskAdapter)(nil)

// RequesterNote implements ThreadDesk: POST /tickets/{id}/notes, public,
// incoming, with the requester as its author.
func (a *DeskAdapter) RequesterNote(ctx context.Context, id int64, body string, requesterID int64) error {
	_, _, err := a.c.Conversations.Note(ctx, id, &sdclient.NoteRequest{Body: body, Private: false, Incoming: true, UserID: requesterID})
	return err
}
