package slackfake

// The Web API's chat and conversation methods: the messages the fake keeps.

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var channelIDPattern = regexp.MustCompile(`^[CDGU][A-Z0-9]+$`)

// resolveChannelLocked turns a channel argument (ID, "#name", "name" or a
// user id for the bot's DM with that user) into a channel id.
func (s *Server) resolveChannelLocked(arg string) (string, bool) {
	if arg == "" {
		return "", false
	}
	if c, ok := s.channels[strings.TrimPrefix(arg, "#")]; ok {
		return c.ID, true
	}
	if channelIDPattern.MatchString(arg) {
		if arg[0] == 'U' {
			// A DM to a user id: Slack answers channel_not_found when no
			// user of the workspace has it (or the account is gone).
			if u, ok := s.users[arg]; !ok || u.Deleted {
				return "", false
			}
			return "D" + arg, true
		}
		return arg, true
	}
	return "", false
}

// ---- messages ----

// storedMessage is the live state of a message in a channel.
type storedMessage struct {
	channel  string
	ts       string
	threadTS string
	text     string
	blocks   json.RawMessage
	edited   string // ts of the last edit
	deleted  bool
	user     string     // the author, "" for the bot (UserMessage)
	reacts   []reaction // reactions added (ReactionAdded), in order
}

func (m *storedMessage) inHistory() bool {
	return !m.deleted && (m.threadTS == "" || m.threadTS == m.ts)
}

func (m *storedMessage) record(method string, updated bool) Message {
	return Message{Method: method, Channel: m.channel, TS: m.ts, ThreadTS: m.threadTS,
		Text: m.text, Blocks: m.blocks, Updated: updated, Deleted: m.deleted, At: time.Now()}
}

// json renders a message as conversations.history and chat.* answers do.
func (s *Server) messageJSONLocked(m *storedMessage) map[string]any {
	out := map[string]any{
		"type":    "message",
		"user":    s.cfg.botUserID,
		"bot_id":  s.cfg.botID,
		"app_id":  s.cfg.appID,
		"text":    m.text,
		"ts":      m.ts,
		"team":    s.cfg.teamID,
		"channel": m.channel,
	}
	if m.threadTS != "" {
		out["thread_ts"] = m.threadTS
	}
	if m.blocks != nil {
		out["blocks"] = m.blocks
	}
	if m.edited != "" {
		out["edited"] = map[string]any{"user": s.cfg.botUserID, "ts": m.edited}
	}
	s.authorJSONLocked(m, out)
	return out
}

func (s *Server) findMessageLocked(channel, ts string) *storedMessage {
	for _, m := range s.history[channel] {
		if m.ts == ts && !m.deleted {
			return m
		}
	}
	return nil
}

// messageContent validates and extracts text and blocks.
func messageContent(r *apiRequest) (text string, blocks json.RawMessage, _ apiError) {
	text = r.param("text")
	if b := strings.TrimSpace(r.param("blocks")); b != "" {
		var arr []json.RawMessage
		if json.Unmarshal([]byte(b), &arr) != nil {
			return "", nil, ErrInvalidBlocks
		}
		if len(arr) > 0 {
			blocks = json.RawMessage(b)
		}
		if blockLimits(blocks) != "" {
			return "", nil, ErrInvalidBlocks
		}
	}
	if utf8.RuneCountInString(text) > maxMessageText {
		return "", nil, ErrMsgTooLong
	}
	return text, blocks, ""
}

func (s *Server) chatPostMessage(r *apiRequest) (map[string]any, apiError) {
	channel, ok := s.resolveChannelLocked(r.param("channel"))
	if !ok {
		return nil, ErrChannelNotFound
	}
	text, blocks, apiErr := messageContent(r)
	if apiErr != "" {
		return nil, apiErr
	}
	if text == "" && blocks == nil && r.param("attachments") == "" {
		return nil, ErrNoText
	}
	m := &storedMessage{channel: channel, ts: s.nextTSLocked(), text: text, blocks: blocks}
	// Slack posts a reply to an unknown parent as a top-level message.
	if parent := r.param("thread_ts"); parent != "" && s.findMessageLocked(channel, parent) != nil {
		m.threadTS = parent
	}
	s.history[channel] = append(s.history[channel], m)
	s.messages = append(s.messages, m.record("chat.postMessage", false))
	s.notifyLocked()
	return map[string]any{"channel": channel, "ts": m.ts, "message": s.messageJSONLocked(m)}, ""
}

func (s *Server) chatPostEphemeral(r *apiRequest) (map[string]any, apiError) {
	channel, ok := s.resolveChannelLocked(r.param("channel"))
	if !ok {
		return nil, ErrChannelNotFound
	}
	user := r.param("user")
	if user == "" {
		return nil, "user_not_in_channel"
	}
	text, blocks, apiErr := messageContent(r)
	if apiErr != "" {
		return nil, apiErr
	}
	if text == "" && blocks == nil && r.param("attachments") == "" {
		return nil, ErrNoText
	}
	ts := s.nextTSLocked()
	s.messages = append(s.messages, Message{Method: "chat.postEphemeral", Channel: channel, TS: ts,
		ThreadTS: r.param("thread_ts"), Text: text, Blocks: blocks, User: user, Ephemeral: true, At: time.Now()})
	s.notifyLocked()
	return map[string]any{"message_ts": ts}, ""
}

// targetMessageLocked is the message a chat.update or chat.delete names
// by channel and ts.
func (s *Server) targetMessageLocked(r *apiRequest) (string, *storedMessage, apiError) {
	channel, ok := s.resolveChannelLocked(r.param("channel"))
	if !ok {
		return "", nil, ErrChannelNotFound
	}
	m := s.findMessageLocked(channel, r.param("ts"))
	if m == nil {
		return "", nil, ErrMessageNotFound
	}
	return channel, m, ""
}

func (s *Server) chatUpdate(r *apiRequest) (map[string]any, apiError) {
	channel, m, apiErr := s.targetMessageLocked(r)
	if apiErr != "" {
		return nil, apiErr
	}
	text, blocks, apiErr := messageContent(r)
	if apiErr != "" {
		return nil, apiErr
	}
	if !r.has("text") && !r.has("blocks") && !r.has("attachments") {
		return nil, ErrNoText
	}
	if r.has("text") {
		m.text = text
	}
	if r.has("blocks") {
		m.blocks = blocks
	}
	m.edited = s.nextTSLocked()
	s.messages = append(s.messages, m.record("chat.update", true))
	s.notifyLocked()
	return map[string]any{"channel": channel, "ts": m.ts, "text": m.text, "message": s.messageJSONLocked(m)}, ""
}

func (s *Server) chatDelete(r *apiRequest) (map[string]any, apiError) {
	channel, m, apiErr := s.targetMessageLocked(r)
	if apiErr != "" {
		return nil, apiErr
	}
	m.deleted = true
	s.messages = append(s.messages, m.record("chat.delete", false))
	s.notifyLocked()
	return map[string]any{"channel": channel, "ts": m.ts}, ""
}

func (s *Server) conversationsHistory(r *apiRequest) (map[string]any, apiError) {
	channel, ok := s.resolveChannelLocked(r.param("channel"))
	if !ok {
		return nil, ErrChannelNotFound
	}
	limit, ok := r.limit(100, 999)
	if !ok {
		return nil, ErrInvalidArguments
	}
	latest, oldest := r.param("latest"), r.param("oldest")
	inclusive := r.param("inclusive") == "1" || r.param("inclusive") == "true"
	msgs := []map[string]any{}
	hasMore := false
	all := s.history[channel]
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		if !m.inHistory() || !tsInRange(m.ts, oldest, latest, inclusive) {
			continue
		}
		if len(msgs) == limit {
			hasMore = true
			break
		}
		msgs = append(msgs, s.messageJSONLocked(m))
	}
	return map[string]any{"messages": msgs, "has_more": hasMore, "pin_count": 0,
		"response_metadata": map[string]any{"next_cursor": ""}}, ""
}

// tsInRange compares Slack timestamps numerically.
func tsInRange(ts, oldest, latest string, inclusive bool) bool {
	v, _ := strconv.ParseFloat(ts, 64)
	if oldest != "" {
		o, _ := strconv.ParseFloat(oldest, 64)
		if v < o || (v == o && !inclusive) {
			return false
		}
	}
	if latest != "" {
		l, _ := strconv.ParseFloat(latest, 64)
		if v > l || (v == l && !inclusive) {
			return false
		}
	}
	return true
}
