package slackchat

import (
	"context"
	"fmt"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// Live threads on the Slack side. An alert's message is linked to its
// ticket when posted (one alert, one ticket; a grouped alert names many
// tickets and is not linked: a reply in its thread could not say which
// ticket it is about). A person's reply in a linked thread (the Events
// API's message event with thread_ts, from message.channels and
// message.groups) goes to the router's ThreadReply, and the author alone
// (chat.postEphemeral in the thread) is told what it became. Messages of
// bots (this one included) are ignored; an edit (message_changed) or a
// deletion (message_deleted) of a reply is not copied, and the thread says
// so once. The scheduler posts the desk's side through PostInThread.

// ThreadLinks is what live threads need of the state store (*store.Store).
type ThreadLinks interface {
	// LinkThread links a ticket to the thread of channel (an id) and
	// threadTS; false when either is already linked.
	LinkThread(ctx context.Context, ticketID int64, channel, threadTS string) (bool, error)
	// LinkedTicket is the ticket linked to a thread; ok false if none.
	LinkedTicket(ctx context.Context, channel, threadTS string) (ticketID int64, ok bool, err error)
	// NoteThreadEdits is true the first time it is called for a ticket.
	NoteThreadEdits(ctx context.Context, ticketID int64) (bool, error)
}

// ThreadReplier makes a reply in a linked thread part of the ticket
// (*bot.Router); the Reply is for the author alone.
type ThreadReplier interface {
	ThreadReply(ctx context.Context, caller chat.Caller, ticketID int64, text string) chat.Reply
}

// threadConfig is what WithThreads sets; zero: live threads are off.
type threadConfig struct {
	links   ThreadLinks
	replies ThreadReplier
}

// WithThreads turns on live threads: alerts are linked to their thread in
// links, and replies in linked threads go to replies. Both are required.
func WithThreads(links ThreadLinks, replies ThreadReplier) Option {
	return func(c *config) { c.threads = threadConfig{links: links, replies: replies} }
}

// editsNotice is what a linked thread is told, once, when a reply in it is
// edited or deleted.
const editsNotice = "Edits and deletions in this thread are not copied to the desk: ticket #%d keeps what was first written. Post a new reply to add to it."

// linkAlert links an alert's message to its ticket (live threads).
func (s *Slack) linkAlert(ctx context.Context, ticketID int64, channel, ts string) {
	if s.threads.links == nil || ts == "" || channel == "" {
		return
	}
	if _, err := s.threads.links.LinkThread(ctx, ticketID, channel, ts); err != nil {
		s.log.Warn("link an alert's thread to its ticket; the thread does not follow the ticket", "ticket", ticketID, "err", err)
	}
}

// PostInThread posts text as a reply in the thread threadTS of channel
// (bot/follow's ThreadPoster).
func (s *Slack) PostInThread(ctx context.Context, channel, threadTS, text string) error {
	_, _, err := s.api.PostMessageContext(ctx, channel, slack.MsgOptionText(escapeFit(text, maxMessageText), false),
		slack.MsgOptionTS(threadTS))
	if err != nil {
		return fmt.Errorf("post in thread %s of %s: %w", threadTS, channel, err)
	}
	return nil
}

// threadEvent handles an events_api envelope (already acked) that is a
// message event, when live threads are on, and says whether it started
// work for it.
func (s *Slack) threadEvent(ctx context.Context, evt socketmode.Event) bool {
	if s.threads.links == nil || evt.Request == nil {
		return false
	}
	outer, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || outer.Type != slackevents.CallbackEvent {
		return false
	}
	me, ok := outer.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || me == nil || s.foreignTeam(outer.TeamID) || !inAThread(me) {
		return false
	}
	if team := me.UserTeam; team != "" && !s.ourTeam(team) {
		if org, _ := s.org.Load().(string); org == "" {
			// In a shared channel, the reply of a person of another
			// team: not copied to the ticket (in a Grid organisation,
			// Email decides, knowing the person's organisation).
			s.log.Debug("ignored a thread message of another team", "team", team, "user", me.User)
			return false
		}
	}
	s.spawn(ctx, evt.Request, job{run: func(ctx context.Context) { s.threadMessage(ctx, me) }})
	return true
}

// inAThread reports whether a message event is a person's reply in a
// thread, or the edit or deletion of one: the only messages live threads
// look at. Every other message of a channel the bot is in (most of them)
// is dropped here, before it costs a worker or a store write.
func inAThread(me *slackevents.MessageEvent) bool {
	reply := func(botID, ts, threadTS string) bool { return botID == "" && threadTS != "" && threadTS != ts }
	switch me.SubType {
	case "", "thread_broadcast", "file_share":
		return me.User != "" && reply(me.BotID, me.TimeStamp, me.ThreadTimeStamp)
	case "message_changed":
		return me.Message != nil && reply(me.Message.BotID, me.Message.Timestamp, me.Message.ThreadTimestamp)
	case "message_deleted":
		return me.PreviousMessage != nil && reply(me.PreviousMessage.BotID, me.PreviousMessage.Timestamp, me.PreviousMessage.ThreadTimestamp)
	}
	return false
}

// threadMessage copies a reply in a linked thread to its ticket, or says
// once that edits and deletions are not copied.
func (s *Slack) threadMessage(ctx context.Context, me *slackevents.MessageEvent) {
	switch me.SubType {
	case "", "thread_broadcast", "file_share":
		if me.BotID != "" || me.User == "" || me.ThreadTimeStamp == "" || me.ThreadTimeStamp == me.TimeStamp {
			return // a bot's, or not a reply in a thread
		}
		id, ok := s.linkedTicket(ctx, me.Channel, me.ThreadTimeStamp)
		if !ok {
			return
		}
		resp := s.threads.replies.ThreadReply(ctx, chat.Caller{UserID: me.User, TeamID: me.UserTeam, ChannelID: me.Channel, Users: s}, id, me.Text)
		s.tellAuthor(ctx, me.Channel, me.ThreadTimeStamp, me.User, resp)
	case "message_changed":
		m, prev := me.Message, me.PreviousMessage
		if m == nil || m.BotID != "" || m.ThreadTimestamp == "" || m.ThreadTimestamp == m.Timestamp ||
			(prev != nil && prev.Text == m.Text) {
			return // a bot's message, a thread's parent, or no change of text (reply counts)
		}
		s.editsNotCopied(ctx, me.Channel, m.ThreadTimestamp)
	case "message_deleted":
		p := me.PreviousMessage
		if p == nil || p.BotID != "" || p.ThreadTimestamp == "" || p.ThreadTimestamp == p.Timestamp {
			return
		}
		s.editsNotCopied(ctx, me.Channel, p.ThreadTimestamp)
	}
}

// linkedTicket is the ticket linked to a thread.
func (s *Slack) linkedTicket(ctx context.Context, channel, threadTS string) (int64, bool) {
	id, ok, err := s.threads.links.LinkedTicket(ctx, channel, threadTS)
	if err != nil {
		s.log.Warn("read the ticket of a thread; the reply is not copied", "channel", channel, "thread", threadTS, "err", err)
	}
	return id, ok && err == nil
}

// editsNotCopied tells a linked thread, once, that edits and deletions are
// not copied to the desk.
func (s *Slack) editsNotCopied(ctx context.Context, channel, threadTS string) {
	id, ok := s.linkedTicket(ctx, channel, threadTS)
	if !ok {
		return
	}
	first, err := s.threads.links.NoteThreadEdits(ctx, id)
	if err != nil || !first {
		if err != nil {
			s.log.Warn("record the edits notice of a thread", "ticket", id, "err", err)
		}
		return
	}
	if err := s.PostInThread(ctx, channel, threadTS, fmt.Sprintf(editsNotice, id)); err != nil {
		s.log.Warn("tell a thread that edits are not copied", "ticket", id, "err", err)
	}
}

// tellAuthor shows the author of a thread reply, alone, what became of it.
func (s *Slack) tellAuthor(ctx context.Context, channel, threadTS, user string, resp chat.Reply) {
	text := messageText(resp)
	if text == "" {
		return
	}
	if _, err := s.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(escapeFit(text, maxMessageText), false),
		slack.MsgOptionTS(threadTS)); err != nil {
		s.log.Warn("tell the author of a thread reply what became of it", "user", user, "err", err)
	}
}
