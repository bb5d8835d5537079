package slackchat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/deskbot/deskbot/bot/chat"
)

// Tickets from messages and link unfurls: the message shortcut "Create
// ticket" (callback id ShortcutCallbackID) opens the new-ticket form with
// the message's first line as subject; the ticket reaction (default
// :ticket:) makes the ticket at once. Either way the router makes one
// ticket per message, and the bot answers in the message's thread. A desk
// ticket link shared in a channel (link_shared) is unfurled into a card
// when the person who shared it may see the ticket.

// DefaultTicketReaction is the emoji (without colons) that makes a ticket
// of a message unless WithTicketReaction says otherwise.
const DefaultTicketReaction = "ticket"

// ShortcutCallbackID is the callback id of the "Create ticket" message
// shortcut (slack-app-manifest.yaml declares it).
const ShortcutCallbackID = "create_ticket"

// messageFormCallbackID is the callback id of the new-ticket form opened
// by the shortcut (the new-ticket modal under another id).
const messageFormCallbackID = "deskbot_message_ticket"

// maxRepliesRead is how many messages of a thread one conversations.replies
// call reads for a ticket's description.
const maxRepliesRead = 200

// FromChat is what the Slack transport needs of the router for tickets
// from messages and link unfurls (*bot.Router).
type FromChat interface {
	// TicketFromMessage makes a ticket of a message; a Public answer is
	// for the message's thread, any other for the caller alone.
	TicketFromMessage(ctx context.Context, caller chat.Caller, m chat.SourceMessage) chat.Reply
	// MessageTicket answers that the message is a ticket already; ok is
	// false when it is not.
	MessageTicket(ctx context.Context, channel, ts string) (chat.Reply, bool)
	// Unfurl returns the cards of the ticket links the caller may see.
	Unfurl(ctx context.Context, caller chat.Caller, urls []string) map[string]*chat.Card
}

var reactionName = regexp.MustCompile(`^[a-z0-9_+'-]{1,100}$`)

// ValidReaction reports whether name (without colons) can be an emoji
// name, as Slack spells them: lower case letters, digits, _ + ' -.
func ValidReaction(name string) bool { return reactionName.MatchString(name) }

// WithTicketReaction sets the emoji (with or without colons) whose
// reaction makes a ticket of a message (DESKBOT_TICKET_REACTION; default
// DefaultTicketReaction); "" turns reactions off.
func WithTicketReaction(name string) Option {
	return func(c *config) { c.reaction = strings.Trim(strings.TrimSpace(name), ":") }
}

// messageMeta travels in the shortcut form's private_metadata.
type messageMeta struct {
	Channel     string `json:"c"`
	TS          string `json:"ts"`
	Thread      string `json:"th,omitempty"`
	ResponseURL string `json:"r,omitempty"`
}

// fromChatEvent starts the work of an Events API envelope, already acked:
// a ticket reaction or a shared link, and says whether it did. Every other
// event is dropped.
func (s *Slack) fromChatEvent(ctx context.Context, evt socketmode.Event) bool {
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok || s.foreignTeam(ev.TeamID) {
		return false
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.ReactionAddedEvent:
		if s.reaction == "" || e.Reaction != s.reaction || e.Item.Type != "message" || e.Item.Channel == "" || e.Item.Timestamp == "" || e.User == "" {
			return false
		}
		s.arrived.Store(time.Now().UnixNano())
		s.reacted(ctx, evt.Request, e)
		return true
	case *slackevents.LinkSharedEvent:
		if len(e.Links) == 0 {
			return false
		}
		s.linkShared(ctx, evt.Request, e)
		return true
	}
	return false
}

// reacted makes a ticket of the message someone put the ticket reaction
// on.
func (s *Slack) reacted(ctx context.Context, req *socketmode.Request, e *slackevents.ReactionAddedEvent) {
	channel, ts, user := e.Item.Channel, e.Item.Timestamp, e.User
	s.spawn(ctx, req, job{
		run: func(ctx context.Context) {
			thread := ""
			m := chat.SourceMessage{Channel: channel, TS: ts, Load: s.loadMessage(channel, ts, &thread)}
			resp := s.router.TicketFromMessage(ctx, s.caller(user, channel), m)
			s.linkMessageTicket(ctx, resp, channel, cmp.Or(thread, ts))
			s.answerMessage(ctx, channel, cmp.Or(thread, ts), user, "", resp)
		},
		busy: func(ctx context.Context, text string) {
			s.answer(ctx, "", channel, user, failed(text+" (no ticket was made; add the reaction again later)"), false)
		},
		sorry: func(ctx context.Context) {
			s.answer(ctx, "", channel, user, failed(chat.PanicText("the ticket reaction")), false)
		},
	})
}

// linkMessageTicket links a ticket made from a message to the message's
// thread (live threads: the thread follows the ticket, and replies in it
// go to the ticket). The first link wins, so an "already ticket #N"
// answer links nothing new.
func (s *Slack) linkMessageTicket(ctx context.Context, resp chat.Reply, channel, thread string) {
	if resp.Ticket != nil && resp.Public {
		s.linkAlert(ctx, resp.Ticket.ID, channel, thread)
	}
}

// caller is a Slack user in a channel as the router sees them.
func (s *Slack) caller(user, channel string) chat.Caller {
	team, _ := s.team.Load().(string)
	return chat.Caller{UserID: user, TeamID: team, ChannelID: channel, Users: s}
}

// shortcut opens the new-ticket form for the message a "Create ticket"
// shortcut was run on; the trigger expires in 3 s, so the form's groups
// come from the router's cache (or are left out).
func (s *Slack) shortcut(ctx context.Context, req *socketmode.Request, cb slack.InteractionCallback) {
	if cb.CallbackID != ShortcutCallbackID {
		return
	}
	channel, user := cb.Channel.ID, cb.User.ID
	s.spawn(ctx, req, job{
		run: func(ctx context.Context) {
			if s.foreignTeam(cb.Team.ID) {
				s.answer(ctx, cb.ResponseURL, channel, user, failed(foreignTeamText), false)
				return
			}
			ts := cmp.Or(cb.MessageTs, cb.Message.Timestamp)
			if resp, ok := s.router.MessageTicket(ctx, channel, ts); ok {
				s.answer(ctx, cb.ResponseURL, channel, user, resp, false)
				return
			}
			form := s.router.Dispatch(ctx, s.caller(user, channel), chat.Command{Slash: "/ticket", Text: "new"}).Form
			if form == nil {
				form = &chat.TicketForm{}
			}
			form.Subject = chat.Truncate(firstLine(plainText(cb.Message.Text)), 250)
			meta, _ := json.Marshal(messageMeta{Channel: channel, TS: ts,
				Thread: cb.Message.ThreadTimestamp, ResponseURL: cb.ResponseURL})
			v := ticketModal(form, string(meta))
			v.CallbackID = messageFormCallbackID
			v.Title = plain("Ticket from message")
			if _, err := s.api.OpenViewContext(ctx, cb.TriggerID, v); err != nil {
				s.log.Warn("open the ticket-from-message form", "err", err)
				s.answer(ctx, cb.ResponseURL, channel, user, failed("could not open the ticket form ("+err.Error()+"); add the :"+cmp.Or(s.reaction, DefaultTicketReaction)+": reaction instead"), false)
			}
		},
		sorry: func(ctx context.Context) {
			s.answer(ctx, cb.ResponseURL, channel, user, failed(chat.PanicText("Create ticket")), false)
		},
	})
}

// submitMessageForm acks a submitted ticket-from-message form (with the
// error on the subject when it is empty or the desk is busy) and makes the
// ticket.
func (s *Slack) submitMessageForm(ctx context.Context, sm acker, req *socketmode.Request, cb slack.InteractionCallback) {
	v := formValues(cb.View.State)
	if v.Subject == "" {
		_ = sm.Ack(*req, slack.NewErrorsViewSubmissionResponse(map[string]string{formSubject: "a ticket needs a subject"}))
		return
	}
	var meta messageMeta
	if json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta) != nil || meta.Channel == "" || meta.TS == "" {
		_ = sm.Ack(*req, slack.NewErrorsViewSubmissionResponse(map[string]string{formSubject: "this form lost its message; run the shortcut again"}))
		return
	}
	p, busy := s.router.Admit()
	if p == nil {
		_ = sm.Ack(*req, slack.NewErrorsViewSubmissionResponse(map[string]string{formSubject: busy}))
		return
	}
	_ = sm.Ack(*req)
	user := cb.User.ID
	s.spawn(ctx, req, job{
		pass: p,
		run: func(ctx context.Context) {
			if s.foreignTeam(cb.Team.ID) {
				s.answer(ctx, meta.ResponseURL, meta.Channel, user, failed(foreignTeamText), false)
				return
			}
			thread := meta.Thread
			m := chat.SourceMessage{Channel: meta.Channel, TS: meta.TS, Form: &v, Load: s.loadMessage(meta.Channel, meta.TS, &thread)}
			resp := s.router.TicketFromMessage(ctx, s.caller(user, meta.Channel), m)
			s.linkMessageTicket(ctx, resp, meta.Channel, cmp.Or(thread, meta.TS))
			s.answerMessage(ctx, meta.Channel, cmp.Or(thread, meta.TS), user, meta.ResponseURL, resp)
		},
		busy: func(ctx context.Context, text string) {
			s.answer(ctx, meta.ResponseURL, meta.Channel, user, failed(text+" (your ticket was not opened: "+v.Subject+")"), false)
		},
		sorry: func(ctx context.Context) {
			s.answer(ctx, meta.ResponseURL, meta.Channel, user, failed(chat.PanicText("Create ticket")), false)
		},
	})
}

// loadMessage reads a message for its ticket: its text and author, the
// replies after it in its thread (one conversations.replies call) and its
// permalink (chat.getPermalink). thread is set to the thread the message
// is in, where the answer goes.
func (s *Slack) loadMessage(channel, ts string, thread *string) func(ctx context.Context) (chat.MessageContent, error) {
	return func(ctx context.Context) (chat.MessageContent, error) {
		msgs, more, _, err := s.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: ts, Limit: maxRepliesRead})
		if err != nil {
			return chat.MessageContent{}, fmt.Errorf("conversations.replies: %w", err)
		}
		var mc chat.MessageContent
		found := false
		for _, m := range msgs {
			switch {
			case m.Timestamp == ts:
				found = true
				mc.Text, mc.Author = plainText(m.Text), m.User
				if m.BotID != "" {
					mc.Author = ""
				}
				if m.ThreadTimestamp != "" {
					*thread = m.ThreadTimestamp
				}
			case found:
				author := m.User
				if m.BotID != "" {
					author = ""
				}
				mc.Replies = append(mc.Replies, chat.ThreadReply{Author: author, Text: plainText(m.Text)})
			}
		}
		if !found {
			return chat.MessageContent{}, fmt.Errorf("conversations.replies: message %s is not in its thread", ts)
		}
		mc.More = more
		link, err := s.api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: channel, Ts: ts})
		if err != nil {
			s.log.Warn("chat.getPermalink", "channel", channel, "ts", ts, "err", err)
		}
		mc.Permalink = link
		return mc, nil
	}
}

// answerMessage answers a ticket-from-message request: a Public answer
// (the ticket made) in the message's thread, falling back to the caller
// alone when the bot may not post there; any other answer to the caller
// alone.
func (s *Slack) answerMessage(ctx context.Context, channel, thread, user, responseURL string, resp chat.Reply) {
	if resp.Public {
		_, _, err := s.api.PostMessageContext(ctx, channel, slack.MsgOptionText(escapeFit(resp.Text, maxMessageText), false), slack.MsgOptionTS(thread))
		if err == nil {
			return
		}
		s.log.Warn("answer in the message's thread", "channel", channel, "err", err)
		resp.Public = false
	}
	s.answer(ctx, responseURL, channel, user, resp, false)
}

// firstLine is the first line of text with words, spaces folded.
func firstLine(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if f := strings.Join(strings.Fields(line), " "); f != "" {
			return f
		}
	}
	return ""
}

// linkShared unfurls the desk ticket links of a shared message that its
// sharer may see (chat.unfurl); nothing when there are none. The desk
// reads are admitted like commands; when the desk is busy the links stay
// as they are.
func (s *Slack) linkShared(ctx context.Context, req *socketmode.Request, e *slackevents.LinkSharedEvent) {
	var urls []string
	for _, l := range e.Links {
		urls = append(urls, l.URL)
	}
	if len(urls) == 0 {
		return
	}
	var composer struct {
		Event struct {
			UnfurlID string `json:"unfurl_id"`
			Source   string `json:"source"`
		} `json:"event"`
	}
	_ = json.Unmarshal(req.Payload, &composer)
	s.spawn(ctx, req, job{
		run: func(ctx context.Context) {
			cards := s.router.Unfurl(ctx, s.caller(e.User, e.Channel), urls)
			if len(cards) == 0 {
				return
			}
			unfurls := map[string]slack.Attachment{}
			for u, c := range cards {
				unfurls[u] = slack.Attachment{Blocks: slack.Blocks{BlockSet: cardBlocks(c)}}
			}
			var err error
			if _, perr := strconv.ParseFloat(e.MessageTimeStamp, 64); perr != nil && composer.Event.UnfurlID != "" {
				// A link still in the composer: message_ts is not a ts.
				_, _, _, err = s.api.UnfurlMessageByIDContext(ctx, composer.Event.UnfurlID, composer.Event.Source, unfurls)
			} else {
				_, _, _, err = s.api.UnfurlMessageContext(ctx, e.Channel, e.MessageTimeStamp, unfurls)
			}
			if err != nil {
				s.log.Warn("chat.unfurl", "channel", e.Channel, "links", len(unfurls), "err", err)
			}
		},
		busy: func(context.Context, string) {
			s.log.Info("left ticket links without a card: the desk is busy", "channel", e.Channel)
		},
	})
}

// slackMarkup finds Slack's angle-bracket markup in message text: links,
// mentions and channel references.
var slackMarkup = regexp.MustCompile(`<([^<>|]*)(?:\|([^<>]*))?>`)

// plainText turns a message's text as Slack stores it into what a person
// read: <url|label> becomes "label (url)", <url> the url, <@U123> "@U123",
// <#C123|name> "#name", <!here> "@here"; and &amp; &lt; &gt; their
// characters.
func plainText(text string) string {
	text = slackMarkup.ReplaceAllStringFunc(text, func(m string) string {
		sub := slackMarkup.FindStringSubmatch(m)
		target, label := sub[1], sub[2]
		switch {
		case strings.HasPrefix(target, "@") && label != "":
			return "@" + label
		case strings.HasPrefix(target, "#") && label != "":
			return "#" + label
		case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"):
			return target
		case strings.HasPrefix(target, "!"):
			name, _, _ := strings.Cut(strings.TrimPrefix(target, "!"), "^")
			if label != "" {
				return label
			}
			return "@" + name
		case label != "" && label != target:
			return label + " (" + target + ")"
		}
		return target
	})
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
}
