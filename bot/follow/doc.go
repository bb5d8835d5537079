// Package follow holds the change feed's other followers, next to the
// chat they serve: live threads (threads.go), digests (digests.go) and the
// rules' direct messages (dm.go). None of them runs inside the cycle's
// steps: threads subscribe to the feed's changes (feed.Subscriber),
// digests run on their own schedule on the scheduler's ticks, on the
// leader only (cycle.TickFollower), and direct messages are sent for
// the execution step behind the interface it declares
// (firing.DMSender).
//
// # What it owns
//
//   - Live threads, desk -> thread (Threads): a linked ticket's new public
//     conversations and status changes posted in its thread, each once
//     (the thread's mark advanced in the store by compare-and-swap first).
//   - Digests (Digests): when each digest rule runs next (kept with the
//     rules' runs in the store, so restarts and new leaders carry the
//     schedules on), the day's message updated in place (its ts kept in
//     the store), retries a minute after a refusal. What a digest says is
//     rules.DigestReport, pure, shared with the previews of `rules plan`.
//   - Direct messages (DMs): the assignee or requester resolved to an
//     e-mail (a small cache, the desk asked through the view the execution
//     step lends), the message sent through the chat, and whether it was
//     already sent (a firing resumed after a crash).
//
// # What it may import
//
// The floors below it: sdclient, store (types), rules, feed, firing and cycle
// (the types they declare for their followers), and bot/chat (the
// vocabulary the transports share). Never bot's router or a transport:
// cmd/deskbot wires the transport in through the small interfaces
// declared here (ThreadPoster, DigestPoster, chat.DMNotifier).
package follow
