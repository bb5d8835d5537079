package bot

import (
	"context"
	"errors"

	"github.com/deskbot/deskbot/sdclient"
)

var _ ThreadDesk = (*DeskAdapter)(nil)

// RequesterNote implements ThreadDesk: POST /tickets/{id}/notes, public,
// incoming, with the requester as its author.
func (a *DeskAdapter) RequesterNote(ctx context.Context, id int64, body string, requesterID int64) error {
	_, _, err := a.c.Conversations.Note(ctx, id, &sdclient.NoteRequest{Body: body, Private: false, Incoming: true, UserID: requesterID})
	return err
}

// errNoThreadDesk: the desk cannot write as a requester (see ThreadDesk).
var errNoThreadDesk = errors.New("this desk cannot add a note as the requester")

// RequesterNote implements ThreadDesk when the desk does, counted as one
// request.
func (d *meteredDesk) RequesterNote(ctx context.Context, id int64, body string, requesterID int64) error {
	td, ok := d.Desk.(ThreadDesk)
	if !ok {
		return errNoThreadDesk
	}
	d.spend(ctx, creditsRequest)
	return td.RequesterNote(ctx, id, body, requesterID)
}
