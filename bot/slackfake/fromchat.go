package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What people do to messages that are not the bot's: post them
// (UserMessage), react to them (ReactionAdded), run a message shortcut on
// them (MessageShortcut) and share links (LinkShared); and the Web API
// methods that read them (conversations.replies, chat.getPermalink) and
// unfurl their links (chat.unfurl).

// reaction is one emoji on a message, with who added it.
type reaction struct {
	name  string
	users []string
}

// Unfurl is one chat.unfurl call as the fake applied it.
type Unfurl struct {
	Channel  string
	TS       string
	UnfurlID string // set when the unfurl named a composer's link (unfurl_id)
	// URLs maps each unfurled URL to its attachment JSON as sent.
	URLs map[string]json.RawMessage
	At   time.Time
}

// UserMessage posts text as the member userID in channel (in the thread
// of threadTS when it names a message there), the way a person's message
// appears in conversations.history and conversations.replies, and returns
// its ts. No event is sent.
func (s *Server) UserMessage(userID, channel, text, threadTS string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return "", fmt.Errorf("post as %s: no such user", userID)
	}
	ch, ok := s.resolveChannelLocked(channel)
	if !ok {
		return "", fmt.Errorf("post as %s: no channel %q", userID, channel)
	}
	m := &storedMessage{channel: ch, ts: s.nextTSLocked(), text: text, user: userID}
	if threadTS != "" {
		if s.findMessageLocked(ch, threadTS) == nil {
			return "", fmt.Errorf("post as %s: no message %s in %s", userID, threadTS, ch)
		}
		m.threadTS = threadTS
	}
	s.history[ch] = append(s.history[ch], m)
	s.notifyLocked()
	return m.ts, nil
}

// authorJSONLocked completes a message's JSON with its author when a
// person wrote it, its thread (reply_count, thread_ts on a parent) and its
// reactions.
func (s *Server) authorJSONLocked(m *storedMessage, out map[string]any) {
	if m.user != "" {
		out["user"] = m.user
		delete(out, "bot_id")
		delete(out, "app_id")
	}
	if m.threadTS == "" {
		if n := len(s.repliesLocked(m.channel, m.ts)); n > 0 {
			out["thread_ts"] = m.ts
			out["reply_count"] = n
		}
	}
	if len(m.reacts) > 0 {
		var rs []map[string]any
		for _, r := range m.reacts {
			rs = append(rs, map[string]any{"name": r.name, "users": r.users, "count": len(r.users)})
		}
		out["reactions"] = rs
	}
}

// repliesLocked are the live replies in the thread of parent, oldest first.
func (s *Server) repliesLocked(channel, parent string) []*storedMessage {
	var out []*storedMessage
	for _, m := range s.history[channel] {
		if !m.deleted && m.threadTS == parent && m.ts != parent {
			out = append(out, m)
		}
	}
	return out
}

// eventCallbackLocked wraps an Events API event as Slack's
// event_callback; an event without its own event_ts (a message event has
// its message's) gets a fresh one.
func (s *Server) eventCallbackLocked(event map[string]any) map[string]any {
	now := s.cfg.clock.Now()
	if _, ok := event["event_ts"]; !ok {
		event["event_ts"] = s.nextTSLocked()
	}
	return map[string]any{
		"token":      "fake-verification-token",
		"team_id":    s.cfg.teamID,
		"api_app_id": s.cfg.appID,
		"event":      event,
		"type":       "event_callback",
		"event_id":   s.nextIDLocked("Ev"),
		"event_time": now.Unix(),
		"authorizations": []any{map[string]any{"enterprise_id": nil, "team_id": s.cfg.teamID,
			"user_id": s.cfg.botUserID, "is_bot": true, "is_enterprise_install": false}},
		"is_ext_shared_channel": false,
	}
}

// lockMessage locks the server and finds the message channel/ts (and
// the channel's id), keeping the lock; without such a message it unlocks
// and says so, after what (the operation: "react to").
func (s *Server) lockMessage(channel, ts, what string) (string, *storedMessage, error) {
	s.mu.Lock()
	ch, _ := s.resolveChannelLocked(channel)
	m := s.findMessageLocked(ch, ts)
	if m == nil {
		s.mu.Unlock()
		return "", nil, fmt.Errorf("%s %s/%s: no such message", what, channel, ts)
	}
	return ch, m, nil
}

// ReactionAdded has userID add the emoji reaction (without colons) to the
// message channel/ts, and delivers the reaction_added event (events_api
// envelope) that Slack sends apps subscribed to it.
func (s *Server) ReactionAdded(ctx context.Context, userID, channel, ts, name string) (*Envelope, error) {
	ch, m, err := s.lockMessage(channel, ts, "react to")
	if err != nil {
		return nil, err
	}
	name = strings.Trim(name, ":")
	i := slices.IndexFunc(m.reacts, func(r reaction) bool { return r.name == name })
	if i < 0 {
		m.reacts = append(m.reacts, reaction{name: name})
		i = len(m.reacts) - 1
	}
	if !slices.Contains(m.reacts[i].users, userID) {
		m.reacts[i].users = append(m.reacts[i].users, userID)
	}
	author := m.user
	if author == "" {
		author = s.cfg.botUserID
	}
	payload := s.eventCallbackLocked(map[string]any{
		"type":      "reaction_added",
		"user":      userID,
		"reaction":  name,
		"item_user": author,
		"item":      map[string]any{"type": "message", "channel": ch, "ts": ts},
	})
	s.mu.Unlock()
	return s.Send(ctx, "events_api", payload)
}

// MessageShortcut delivers the interactive message_action envelope of
// userID running the message shortcut callbackID on channel/ts, with a
// fresh trigger_id and response_url, the message as Slack sends it.
func (s *Server) MessageShortcut(ctx context.Context, userID, channel, ts, callbackID string) (*Envelope, error) {
	ch, m, err := s.lockMessage(channel, ts, "shortcut on")
	if err != nil {
		return nil, err
	}
	envID := newEnvelopeID()
	trig := s.newTriggerLocked(userID, "")
	respURL := s.newResponseURLLocked(envID, ch, "", userID)
	payload := map[string]any{
		"type":                  "message_action",
		"token":                 "fake-verification-token",
		"action_ts":             s.nextTSLocked(),
		"team":                  map[string]any{"id": s.cfg.teamID, "domain": s.cfg.teamName},
		"user":                  s.interactionUserLocked(userID),
		"channel":               map[string]any{"id": ch, "name": s.channelNameLocked(ch)},
		"is_enterprise_install": false,
		"enterprise":            nil,
		"callback_id":           callbackID,
		"trigger_id":            trig,
		"response_url":          respURL,
		"message_ts":            ts,
		"message":               s.messageJSONLocked(m),
	}
	s.mu.Unlock()
	env := &Envelope{ID: envID, Type: "interactive", Payload: mustJSON(payload), TriggerID: trig, ResponseURL: respURL, s: s}
	return env, s.deliver(ctx, env)
}

// LinkShared has userID post a message with the links in channel and
// delivers the link_shared event Slack sends for links of the app's
// unfurl domains; it returns the envelope and the message's ts.
func (s *Server) LinkShared(ctx context.Context, userID, channel string, links ...string) (*Envelope, string, error) {
	var text []string
	var shared []any
	for _, l := range links {
		u, err := url.Parse(l)
		if err != nil || u.Host == "" {
			return nil, "", fmt.Errorf("share link %q: not a URL", l)
		}
		text = append(text, "<"+l+">")
		shared = append(shared, map[string]any{"domain": u.Hostname(), "url": l})
	}
	ts, err := s.UserMessage(userID, channel, strings.Join(text, " "), "")
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	ch, _ := s.resolveChannelLocked(channel)
	payload := s.eventCallbackLocked(map[string]any{
		"type":               "link_shared",
		"channel":            ch,
		"is_bot_user_member": true,
		"user":               userID,
		"message_ts":         ts,
		"unfurl_id":          ch + "." + ts + "." + s.nextIDLocked("U"),
		"source":             "conversations_history",
		"links":              shared,
	})
	s.mu.Unlock()
	env, err := s.Send(ctx, "events_api", payload)
	return env, ts, err
}

// LinkSharedInComposer delivers the link_shared event Slack sends while
// userID is still typing the links in a message composer: the
// channel is "COMPOSER", message_ts is not a ts, and only unfurl_id and
// source name what chat.unfurl unfurls. It returns the envelope and the
// unfurl_id.
func (s *Server) LinkSharedInComposer(ctx context.Context, userID string, links ...string) (*Envelope, string, error) {
	var shared []any
	for _, l := range links {
		u, err := url.Parse(l)
		if err != nil || u.Host == "" {
			return nil, "", fmt.Errorf("share link %q: not a URL", l)
		}
		shared = append(shared, map[string]any{"domain": u.Hostname(), "url": l})
	}
	s.mu.Lock()
	if s.composer == nil {
		s.composer = map[string][]string{}
	}
	id := s.nextIDLocked("composer-")
	s.composer[id] = links
	payload := s.eventCallbackLocked(map[string]any{
		"type":       "link_shared",
		"channel":    "COMPOSER",
		"user":       userID,
		"message_ts": "c0ffee" + strings.ToLower(id),
		"unfurl_id":  id,
		"source":     "composer",
		"links":      shared,
	})
	s.mu.Unlock()
	env, err := s.Send(ctx, "events_api", payload)
	return env, id, err
}

// messageParamLocked finds the message the request names by its channel
// and ts parameters (tsParam: "ts", "message_ts"): ErrChannelNotFound for
// an unknown channel, notFound for no such message there.
func (s *Server) messageParamLocked(r *apiRequest, tsParam string, notFound apiError) (string, *storedMessage, apiError) {
	ch, ok := s.resolveChannelLocked(r.param("channel"))
	if !ok {
		return "", nil, ErrChannelNotFound
	}
	m := s.findMessageLocked(ch, r.param(tsParam))
	if m == nil {
		return "", nil, notFound
	}
	return ch, m, ""
}

// conversationsReplies serves conversations.replies: the thread of the
// message ts (its parent first, then the replies), paged by limit and
// cursor.
func (s *Server) conversationsReplies(r *apiRequest) (map[string]any, apiError) {
	ch, m, apiErr := s.messageParamLocked(r, "ts", "thread_not_found")
	if apiErr != "" {
		return nil, apiErr
	}
	parent := m
	if m.threadTS != "" && m.threadTS != m.ts {
		if parent = s.findMessageLocked(ch, m.threadTS); parent == nil {
			return nil, "thread_not_found"
		}
	}
	thread := append([]*storedMessage{parent}, s.repliesLocked(ch, parent.ts)...)
	limit, ok := r.limit(1000, 1000)
	if !ok {
		return nil, ErrInvalidArguments
	}
	from := 0
	if c := r.param("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "reply:"))
		if err != nil || n < 0 || n > len(thread) || !strings.HasPrefix(c, "reply:") {
			return nil, "invalid_cursor"
		}
		from = n
	}
	msgs := []map[string]any{}
	for _, t := range thread[from:min(from+limit, len(thread))] {
		msgs = append(msgs, s.messageJSONLocked(t))
	}
	next := ""
	if from+limit < len(thread) {
		next = fmt.Sprintf("reply:%d", from+limit)
	}
	return map[string]any{"messages": msgs, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next}}, ""
}

// chatGetPermalink serves chat.getPermalink: the message's web address.
func (s *Server) chatGetPermalink(r *apiRequest) (map[string]any, apiError) {
	ch, m, apiErr := s.messageParamLocked(r, "message_ts", ErrMessageNotFound)
	if apiErr != "" {
		return nil, apiErr
	}
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", s.cfg.teamName, ch, strings.ReplaceAll(m.ts, ".", ""))
	if m.threadTS != "" && m.threadTS != m.ts {
		link += "?thread_ts=" + m.threadTS + "&cid=" + ch
	}
	return map[string]any{"channel": ch, "permalink": link}, ""
}

// chatUnfurl serves chat.unfurl by channel and ts: every URL unfurled
// must be in the message's text, and each attachment's blocks must be
// valid.
func (s *Server) chatUnfurl(r *apiRequest) (map[string]any, apiError) {
	var rec Unfurl
	var text string
	if id := r.param("unfurl_id"); id != "" || r.has("source") {
		links, ok := s.composer[id]
		switch {
		case r.param("source") != "composer" && r.param("source") != "conversations_history":
			return nil, "invalid_source"
		case !ok:
			return nil, "invalid_unfurl_id"
		}
		rec.UnfurlID, text = id, strings.Join(links, " ")
	} else {
		ch, m, apiErr := s.messageParamLocked(r, "ts", "cannot_unfurl_message")
		if apiErr != "" {
			return nil, apiErr
		}
		rec.Channel, rec.TS, text = ch, m.ts, m.text
	}
	var unfurls map[string]json.RawMessage
	if json.Unmarshal([]byte(r.param("unfurls")), &unfurls) != nil || len(unfurls) == 0 {
		return nil, "invalid_unfurls_format"
	}
	for u, att := range unfurls {
		if !strings.Contains(text, u) {
			return nil, "cannot_unfurl_url"
		}
		var a struct {
			Blocks json.RawMessage `json:"blocks"`
		}
		if json.Unmarshal(att, &a) != nil {
			return nil, "invalid_unfurls_format"
		}
		if len(a.Blocks) > 0 && blockLimits(a.Blocks) != "" {
			return nil, ErrInvalidBlocks
		}
	}
	rec.URLs, rec.At = unfurls, time.Now()
	s.unfurls = append(s.unfurls, rec)
	s.notifyLocked()
	return map[string]any{}, ""
}

// Unfurls returns the chat.unfurl calls applied so far.
func (s *Server) Unfurls() []Unfurl {
	return cloned(s, &s.unfurls)
}

// WaitUnfurl waits for a chat.unfurl call matching pred (nil matches
// any).
func (s *Server) WaitUnfurl(ctx context.Context, pred func(Unfurl) bool) (Unfurl, error) {
	return waitFirst(ctx, s, "unfurl", &s.unfurls, pred)
}
