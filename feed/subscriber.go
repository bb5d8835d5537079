package feed

import (
	"context"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Changes is what one sync saw change, as published to subscribers: the
// tickets new or updated in the mirror (deleted and spam ones left out),
// whether the sync was complete, the tickets that left the mirror as
// deleted or spam (as the desk showed them then; their UpdatedAt says
// when), and the changes deskbot brought in itself since the last sync
// (Observe: a re-read, a firing's or a person's update), which the change
// feed will not show as changes.
type Changes struct {
	Tickets  []*sdclient.Ticket
	Complete bool
	Gone     []*sdclient.Ticket
	Observed []*sdclient.Ticket
}

// Subscriber follows the feed: the feed calls FeedChanged after each sync
// with the tickets that sync read as changed, so the feed's other
// followers (live threads) need not be called from inside the cycle.
type Subscriber interface {
	FeedChanged(ctx context.Context, c Changes)
}

// FullSyncSubscriber is a Subscriber that also hears of each full sync
// that completed: at (the feed's clock) and every ticket the workspace's
// mirror holds then, shared read-only (the history records the starting
// state from it). It is called from the full sync's goroutine, which may
// be a background one.
type FullSyncSubscriber interface {
	Subscriber
	FeedFullSynced(ctx context.Context, at time.Time, tickets []*sdclient.Ticket)
}
