package scheduler

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Live threads, desk -> thread: a ticket linked to a Slack thread (an
// alert's message, a ticket made from chat; the link is in the store) has
// its public replies and status changes posted to that thread, each once.
// They are learned from the change feed: a linked ticket whose updated_at
// moved costs one GET /tickets/{id}/conversations (one more per hundred
// conversations), an unlinked one nothing; which changed tickets are linked
// is one store query per sync. Before posting, the thread's mark (newest
// conversation id, last status) is advanced by a compare-and-swap in the
// store, so a restart or a second replica never posts a change twice (a
// crash between the claim and the post loses that post instead).

// ThreadStore keeps the thread links; *store.Store implements it.
type ThreadStore interface {
	// ThreadsOf returns the links of those of ids that are linked.
	ThreadsOf(ctx context.Context, ids []int64) (map[int64]store.ThreadLink, error)
	// AdvanceThread moves a link's mark from from to to if it is still
	// from; false: another poster got there first.
	AdvanceThread(ctx context.Context, ticketID int64, from, to store.ThreadMark) (bool, error)
}

// ThreadPoster posts a message in a chat thread; the chat side implements
// it.
type ThreadPoster interface {
	// PostInThread posts text (plain text, the poster escapes it) as a
	// reply in the thread threadTS of channel.
	PostInThread(ctx context.Context, channel, threadTS, text string) error
}

// WithThreads makes the scheduler follow the linked threads: after each
// sync, the changed tickets linked in ts get their new public
// conversations and status changes posted through p.
func WithThreads(ts ThreadStore, p ThreadPoster) Option {
	return func(cfg *config) { cfg.threads = &threadFollower{store: ts, poster: p} }
}

type threadFollower struct {
	store  ThreadStore
	poster ThreadPoster
}

// threadSkew is how much earlier than the link a conversation may be dated
// by the desk's clock and still be posted (the ticket's first reply may
// race the alert).
const threadSkew = time.Minute

// maxThreadText bounds one conversation's text in a thread post.
const maxThreadText = 2500

// followThreads posts what changed on the linked tickets among those the
// sync saw change (a feed.Subscriber: threadsOf, feed.go).
func (s *Scheduler) followThreads(ctx context.Context, cy *cycle, changed []*sdclient.Ticket) {
	th := s.cfg.threads
	if th == nil || len(changed) == 0 {
		return
	}
	latest := make(map[int64]*sdclient.Ticket, len(changed))
	ids := make([]int64, 0, len(changed))
	for _, t := range changed {
		if t.Deleted || t.Spam {
			continue
		}
		if _, seen := latest[t.ID]; !seen {
			ids = append(ids, t.ID)
		}
		latest[t.ID] = t
	}
	if len(ids) == 0 {
		return
	}
	links, err := th.store.ThreadsOf(ctx, ids)
	if err != nil {
		cy.log.Error("read the linked threads of changed tickets; their changes are not posted", slog.Any("error", err))
		return
	}
	for _, id := range ids {
		if l, ok := links[id]; ok {
			s.followThread(ctx, cy, th, latest[id], l)
		}
	}
}

// followThread posts, in ticket t's thread l, its public conversations
// newer than the thread's mark and its status if it changed.
func (s *Scheduler) followThread(ctx context.Context, cy *cycle, th *threadFollower, t *sdclient.Ticket, l store.ThreadLink) {
	log := cy.log.With(slog.Int64("ticket", t.ID), slog.String("channel", l.Channel), slog.String("thread", l.ThreadTS))
	convs, err := s.conversations(ctx, cy, t.ID)
	if err != nil {
		log.Warn("read the conversations of a linked ticket; its thread catches up at its next change", slog.Any("error", err))
		return
	}
	m, err := s.marks(ctx)
	if err != nil {
		log.Warn("read the marks of deskbot's own conversations; the thread catches up at the ticket's next change", slog.Any("error", err))
		return
	}
	posts, to := threadPosts(m, t, l, convs)
	if to == l.Posted {
		return
	}
	if s.cfg.dryRun {
		for _, p := range posts {
			log.Info("dry run: would post in the ticket's thread", slog.String("text", p))
		}
		return
	}
	won, err := th.store.AdvanceThread(ctx, t.ID, l.Posted, to)
	if err != nil || !won {
		if err != nil {
			log.Error("claim the thread's posts; not posted", slog.Any("error", err))
		}
		return // another replica posts them
	}
	for _, p := range posts {
		if err := th.poster.PostInThread(ctx, l.Channel, l.ThreadTS, p); err != nil {
			log.Error("post a desk change in the ticket's thread; it is not retried", slog.Any("error", err))
			return
		}
	}
}

// threadPosts works out what to post in ticket t's thread l given the
// ticket's conversations: the texts, and the mark after them. The first
// look at a link of unknown status takes the status as it is.
func threadPosts(m *store.Marks, t *sdclient.Ticket, l store.ThreadLink, convs []*sdclient.Conversation) ([]string, store.ThreadMark) {
	to := l.Posted
	var posts []string
	convs = slices.Clone(convs)
	slices.SortFunc(convs, func(a, b *sdclient.Conversation) int { return cmp.Compare(a.ID, b.ID) })
	since := l.LinkedAt.Add(-threadSkew)
	for _, c := range convs {
		if c == nil || c.ID <= l.Posted.ConvID {
			continue
		}
		to.ConvID = max(to.ConvID, c.ID)
		if c.Private || m.IsFromThread(t.ID, c.Body, c.BodyText) || (!l.LinkedAt.IsZero() && c.CreatedAt.Before(since)) {
			continue
		}
		posts = append(posts, conversationPost(c))
	}
	switch {
	case l.Posted.Status == 0:
		to.Status = t.Status
	case t.Status != l.Posted.Status:
		to.Status = t.Status
		posts = append(posts, fmt.Sprintf("Status on the desk: %s → %s", statusName(l.Posted.Status), statusName(t.Status)))
	}
	return posts, to
}

// conversationPost is the thread's text of a public conversation.
func conversationPost(c *sdclient.Conversation) string {
	text := cmp.Or(strings.TrimSpace(dropTags(c.BodyText)), htmlToText(c.Body))
	if r := []rune(text); len(r) > maxThreadText {
		text = string(r[:maxThreadText]) + "…"
	}
	who := "Reply on the desk"
	switch {
	case c.Incoming:
		who = "The requester wrote (by e-mail)"
	case c.Source == sdclient.ConversationSourceNote:
		who = "Public note on the desk"
	}
	return who + ":\n" + text
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// htmlToText is an HTML body as text: tags dropped, entities decoded.
func htmlToText(s string) string {
	s = strings.NewReplacer("<br>", "\n", "<br/>", "\n", "<br />", "\n", "</p>", "\n").Replace(s)
	return strings.TrimSpace(dropTags(html.UnescapeString(htmlTag.ReplaceAllString(s, ""))))
}

// statusName names the desk's built-in statuses (as a digest does); a
// custom one by number.
func statusName(st int) string {
	return cmp.Or(digestStatus[st], fmt.Sprintf("status %d", st))
}
