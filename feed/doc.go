// Package feed follows the desk's change feed into a local mirror of the
// open tickets, kept in the state store and rebuilt by a periodic full
// sync, and tells its subscribers what each sync changed. A sync costs
// about one request per hundred changed tickets, whatever the desk's size.
//
// # What it owns
//
//   - Feed (feed.go): one over every polled workspace, since a cycle
//     evaluates the rules on all of them at once and /readyz reports them
//     together; a workspace's mirror is a wsMirror (mirror.go). Created
//     by New with functional options (Option).
//   - Sync (sync.go): reload a mirror another replica wrote, start a full
//     sync where one is due (Inline: wait for it; else in the background,
//     through WithBackground, calling WithFirstSynced's function when a
//     first one finished), follow GET /tickets?updated_since= from the
//     cursor, sweep the deleted and spam tickets out; it returns Synced:
//     what changed (ChangedTickets, RemovedIDs), whether the mirror is
//     complete and why not, the requests spent, the progress of a full
//     sync under way. Every request it sends on the caller's behalf goes
//     through Count as it is sent, so that the scheduler's budget planner
//     sees it. IncompleteLevel says how loudly to log an incomplete sync
//     (info when only a first full sync, ErrFirstSync, is under way).
//   - The full sync (fullsync.go): the search over the open statuses, or,
//     where the desk caps its pages or the list is cheaper, the ticket
//     list (fullsync_list.go) or created_at windows (fullsync_created.go).
//   - The desk's open statuses (statuses.go): the full sync's queries and
//     the status:open macro; a ticket showing an unknown one
//     (NoticeStatus) makes the next sync re-read them.
//   - The mirror's own writes: Observe (a ticket deskbot read or changed),
//     Forget (one the desk no longer has), Persist; the reads Snapshot,
//     Tickets, Gone, Complete, Status; /readyz's Health (health.go); the
//     deskbot_mirror_* metrics (metrics.go).
//   - LiveMirror (livemirror.go): the mirror as people's commands read it,
//     from the feed's memory while this replica leads (WithLeads), else
//     from the store; it takes in what deskbot changed for people.
//   - Subscriber (subscriber.go): the feed's followers (live threads,
//     the history's recorder) hear of each sync's changes from the feed,
//     not from the cycle: the tickets changed, gone (deleted, spam) and
//     brought in by deskbot itself (Observe); a FullSyncSubscriber also
//     hears of each complete full sync's tickets.
//
// # What it may import
//
// sdclient and its filter, store (for the mirror's types), rules,
// internal/prom (its metrics' constructors); never scheduler, bot or cmd. The desk is reached only through Desk, declared
// here with the methods the feed calls; the store through MirrorStore.
package feed
