// Package feed is the desk's change feed and the ticket mirror it keeps.
// Each sync's changes are published to Subscribers, so that the feed's
// other followers (live threads) learn of them without being called from
// inside the sync.
package feed

import (
	"context"

	"github.com/deskbot/deskbot/sdclient"
)

// Changes is what one sync learned: the tickets the feed saw change (new
// or updated in the mirror; deleted and spam tickets left out), and
// whether the sync was complete.
type Changes struct {
	Tickets  []*sdclient.Ticket
	Complete bool
}

// Subscriber follows the feed: it is told each sync's changes, after the
// sync, on the replica that syncs (the leader).
type Subscriber interface {
	FeedChanged(ctx context.Context, c Changes)
}
