package feed

import (
	"context"

	"github.com/deskbot/deskbot/sdclient"
)

// Changes is what one sync saw change, as published to subscribers: the
// tickets new or updated in the mirror (deleted and spam ones left out),
// and whether the sync was complete.
type Changes struct {
	Tickets  []*sdclient.Ticket
	Complete bool
}

// Subscriber follows the feed: the feed calls FeedChanged after each sync
// with the tickets that sync read as changed, so the feed's other
// followers (live threads) need not be called from inside the cycle.
type Subscriber interface {
	FeedChanged(ctx context.Context, c Changes)
}
