package bot

import (
	"context"

	"github.com/deskbot/deskbot/sdclient"
)

// RequesterNote implements Desk: POST /tickets/{id}/notes, public,
// incoming, with the requester as its author.
func (a *DeskAdapter) RequesterNote(ctx context.Context, id int64, body string, requesterID int64) error {
	_, _, err := a.c.Conversations.Note(ctx, id, &sdclient.NoteRequest{Body: body, Private: false, Incoming: true, UserID: requesterID})
	return err
}

// RequesterNote is counted as one request when the desk can write as a
// requester.
func (d *meteredDesk) RequesterNote(ctx context.Context, id int64, body string, requesterID int64) error {
	err := d.Desk.RequesterNote(ctx, id, body, requesterID)
	d.spendAsked(ctx, err)
	return err
}
