package slackfake

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// UserMessage is a message a person posts in a channel, top-level or in a
// thread, as the Events API's message event (message.channels,
// message.groups) describes it.
type UserMessage struct {
	UserID    string
	ChannelID string // C… (channel_type "channel") or G… (private: "group")
	ThreadTS  string // the thread's parent ts; empty for a top-level message
	TS        string // filled by PostUserMessage when empty
	Text      string
}

// PostUserMessage delivers the events_api envelope of a person posting m
// (an event_callback whose event is a plain message, no subtype) and
// returns it with its ts. The fake keeps no history of people's messages:
// only the bot's own are in conversations.history.
func (s *Server) PostUserMessage(ctx context.Context, m UserMessage) (UserMessage, *Envelope, error) {
	s.mu.Lock()
	if m.TS == "" {
		m.TS = s.nextTSLocked()
	}
	ev := s.userMessageJSONLocked(m)
	ev["client_msg_id"] = fmt.Sprintf("%08x-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffff, time.Now().UnixNano())
	ev["channel"], ev["channel_type"], ev["event_ts"] = m.ChannelID, channelType(m.ChannelID), m.TS
	payload := s.eventCallbackLocked(ev)
	if s.userTeamLocked(m.UserID) != s.cfg.teamID {
		payload["is_ext_shared_channel"] = true
	}
	s.mu.Unlock()
	env, err := s.Send(ctx, "events_api", payload)
	return m, env, err
}

// EditUserMessage delivers the message_changed event of m's author editing
// it to text: the event's own ts is new, the edited message is under
// "message" (with "edited") and the old one under "previous_message", as
// Slack sends it.
func (s *Server) EditUserMessage(ctx context.Context, m UserMessage, text string) (*Envelope, error) {
	s.mu.Lock()
	ts := s.nextTSLocked()
	edited := s.userMessageJSONLocked(m)
	edited["text"] = text
	edited["edited"] = map[string]any{"user": m.UserID, "ts": ts}
	ev := map[string]any{
		"type": "message", "subtype": "message_changed", "hidden": true,
		"channel": m.ChannelID, "channel_type": channelType(m.ChannelID), "ts": ts, "event_ts": ts,
		"message": edited, "previous_message": s.userMessageJSONLocked(m),
	}
	payload := s.eventCallbackLocked(ev)
	s.mu.Unlock()
	return s.Send(ctx, "events_api", payload)
}

// DeleteUserMessage delivers the message_deleted event of m being deleted.
func (s *Server) DeleteUserMessage(ctx context.Context, m UserMessage) (*Envelope, error) {
	s.mu.Lock()
	ts := s.nextTSLocked()
	ev := map[string]any{
		"type": "message", "subtype": "message_deleted", "hidden": true,
		"channel": m.ChannelID, "channel_type": channelType(m.ChannelID), "ts": ts, "event_ts": ts,
		"deleted_ts": m.TS, "previous_message": s.userMessageJSONLocked(m),
	}
	payload := s.eventCallbackLocked(ev)
	s.mu.Unlock()
	return s.Send(ctx, "events_api", payload)
}

// EchoBotMessage delivers the message event Slack sends to an app
// subscribed to message.channels for one of the bot's own posts (as
// recorded in Messages): user is the bot user, with bot_id and app_id.
func (s *Server) EchoBotMessage(ctx context.Context, m Message) (*Envelope, error) {
	s.mu.Lock()
	ev := map[string]any{
		"type": "message", "user": s.cfg.botUserID, "bot_id": s.cfg.botID, "app_id": s.cfg.appID,
		"text": m.Text, "ts": m.TS, "team": s.cfg.teamID,
		"channel": m.Channel, "channel_type": channelType(m.Channel), "event_ts": m.TS,
	}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	payload := s.eventCallbackLocked(ev)
	s.mu.Unlock()
	return s.Send(ctx, "events_api", payload)
}

// userMessageJSONLocked is m as a message object (the event's top level,
// or its message / previous_message).
func (s *Server) userMessageJSONLocked(m UserMessage) map[string]any {
	team := s.userTeamLocked(m.UserID)
	// A message carries its author's own team: in a shared (Slack
	// Connect) channel, another organisation's (user_team, source_team).
	out := map[string]any{"type": "message", "user": m.UserID, "text": m.Text, "ts": m.TS,
		"team": team, "user_team": team, "source_team": team}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
		out["parent_user_id"] = s.cfg.botUserID
	}
	return out
}

// userTeamLocked is the team of member userID: the fake's own unless the
// user was added with another (a Slack Connect guest).
func (s *Server) userTeamLocked(userID string) string {
	if u, ok := s.users[userID]; ok && u.TeamID != "" {
		return u.TeamID
	}
	return s.cfg.teamID
}

// channelType is the channel_type of a message event in channel id.
func channelType(id string) string {
	switch {
	case strings.HasPrefix(id, "G"):
		return "group"
	case strings.HasPrefix(id, "D"):
		return "im"
	}
	return "channel"
}
