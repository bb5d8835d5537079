package follow

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/rules"
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

// ConversationDesk reads a ticket's conversations; firing.ClientDesk
// implements it.
type ConversationDesk interface {
	// ListConversations reads one page of a ticket's conversations.
	ListConversations(ctx context.Context, id int64, opts *sdclient.ListOptions) ([]*sdclient.Conversation, *sdclient.Response, error)
}

// MarksSource gives the installation's marks, which tell what came from a
// thread (no echo); *store.Store implements it.
type MarksSource interface {
	Marks(ctx context.Context) (*store.Marks, error)
}

// Threads follows the linked threads: told the tickets each sync saw
// change (it is a feed.Subscriber), it posts the new public conversations
// and status changes of the linked ones in their threads.
type Threads struct {
	cfg    config
	desk   ConversationDesk
	store  ThreadStore
	poster ThreadPoster
	src    MarksSource

	marksMu sync.Mutex
	marks   *store.Marks // read once
}

var _ feed.Subscriber = (*Threads)(nil)

// NewThreads follows the threads linked in ts, reading conversations from
// desk and posting through p; marks tells what came from a thread.
func NewThreads(desk ConversationDesk, ts ThreadStore, p ThreadPoster, marks MarksSource, opts ...Option) *Threads {
	return &Threads{cfg: newConfig(opts), desk: desk, store: ts, poster: p, src: marks}
}

// threadSkew is how much earlier than the link a conversation may be dated
// by the desk's clock and still be posted (the ticket's first reply may
// race the alert).
const threadSkew = time.Minute

// maxThreadText bounds one conversation's text in a thread post.
const maxThreadText = 2500

// FeedChanged posts what changed on the linked tickets among those the
// sync saw change.
func (th *Threads) FeedChanged(ctx context.Context, c feed.Changes) {
	if len(c.Tickets) == 0 {
		return
	}
	latest := make(map[int64]*sdclient.Ticket, len(c.Tickets))
	ids := make([]int64, 0, len(c.Tickets))
	for _, t := range c.Tickets {
		if t == nil || t.Deleted || t.Spam {
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
		th.cfg.logger.Error("read the linked threads of changed tickets; their changes are not posted", slog.Any("error", err))
		return
	}
	for _, id := range ids {
		if l, ok := links[id]; ok {
			th.follow(ctx, latest[id], l)
		}
	}
}

// follow posts, in ticket t's thread l, its public conversations newer
// than the thread's mark and its status if it changed.
func (th *Threads) follow(ctx context.Context, t *sdclient.Ticket, l store.ThreadLink) {
	log := th.cfg.logger.With(slog.Int64("ticket", t.ID), slog.String("channel", l.Channel), slog.String("thread", l.ThreadTS))
	convs, err := th.conversations(ctx, t.ID)
	if err != nil {
		log.Warn("read the conversations of a linked ticket; its thread catches up at its next change", slog.Any("error", err))
		return
	}
	m, err := th.marksOf(ctx)
	if err != nil {
		log.Warn("read the marks of deskbot's own conversations; the thread catches up at the ticket's next change", slog.Any("error", err))
		return
	}
	posts, to := threadPosts(m, t, l, convs)
	if to == l.Posted {
		return
	}
	if th.cfg.dryRun {
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

// conversations reads every conversation of ticket id.
func (th *Threads) conversations(ctx context.Context, id int64) ([]*sdclient.Conversation, error) {
	const perPage = 100
	var out []*sdclient.Conversation
	for page := 1; page <= 1000; page++ {
		list, _, err := th.desk.ListConversations(ctx, id, &sdclient.ListOptions{Page: page, PerPage: perPage})
		if err != nil {
			return nil, fmt.Errorf("list conversations of ticket %d: %w", id, err)
		}
		out = append(out, list...)
		if len(list) < perPage {
			break
		}
	}
	return out, nil
}

// marksOf returns the installation's marks, read once.
func (th *Threads) marksOf(ctx context.Context) (*store.Marks, error) {
	th.marksMu.Lock()
	defer th.marksMu.Unlock()
	if th.marks != nil {
		return th.marks, nil
	}
	if th.src == nil {
		th.marks = store.NewMarks(nil)
		return th.marks, nil
	}
	m, err := th.src.Marks(ctx)
	if err != nil {
		return nil, fmt.Errorf("marks: %w", err)
	}
	th.marks = m
	return m, nil
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
		posts = append(posts, fmt.Sprintf("Status on the desk: %s → %s", rules.StatusName(l.Posted.Status), rules.StatusName(t.Status)))
	}
	return posts, to
}

// conversationPost is the thread's text of a public conversation.
func conversationPost(c *sdclient.Conversation) string {
	text := cmp.Or(strings.TrimSpace(dropMarks(c.BodyText)), htmlToText(c.Body))
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
	return strings.TrimSpace(dropMarks(html.UnescapeString(htmlTag.ReplaceAllString(s, ""))))
}

// dropMarks removes the invisible characters of deskbot's marks
// (store.Marks: word joiner, zero width space and non-joiner) from s.
func dropMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\u2060' || r == '\u200b' || r == '\u200c' {
			return -1
		}
		return r
	}, s)
}
