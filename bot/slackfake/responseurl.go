package slackfake

// response_url: the answers to a slash command or an interaction, posted
// back to the URL that came with it.

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// responseURL is a response_url handed out with an envelope.
type responseURL struct {
	envelopeID string
	channel    string
	messageTS  string // the message an interaction came from
	userID     string
	created    time.Time
	uses       int
}

func (s *Server) newResponseURLLocked(envID, channel, messageTS, userID string) string {
	id := randomHex(12)
	s.respURLs[id] = &responseURL{envelopeID: envID, channel: channel, messageTS: messageTS,
		userID: userID, created: s.cfg.clock.Now()}
	return s.URL + "/response/" + id
}

// responseURLMessage is what a response_url POST carries.
type responseURLMessage struct {
	Text            string          `json:"text"`
	Blocks          json.RawMessage `json:"blocks"`
	ResponseType    string          `json:"response_type"`
	ReplaceOriginal bool            `json:"replace_original"`
	DeleteOriginal  bool            `json:"delete_original"`
	ThreadTS        string          `json:"thread_ts"`
}

// replyResponseURL answers a response_url POST as Slack does: {"ok":true}
// or {"ok":false,"error":code}.
func replyResponseURL(w http.ResponseWriter, status int, errCode string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if errCode == "" {
		_, _ = io.WriteString(w, `{"ok":true}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": errCode})
}

func (s *Server) serveResponseURL(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		replyResponseURL(w, http.StatusMethodNotAllowed, "method_not_allowed")
		return
	}
	if f, ok := s.takeFault(ResponseURLMethod); ok {
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 4<<20))
		switch {
		case f.rateLimit:
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.retryAfter.Seconds()))))
			replyResponseURL(w, http.StatusTooManyRequests, ErrRateLimited)
		case f.status != 0:
			replyResponseURL(w, f.status, "service_unavailable")
		default:
			replyResponseURL(w, http.StatusOK, f.err)
		}
		return
	}
	body, msg, errCode := readResponseURLMessage(req)
	if errCode != "" {
		replyResponseURL(w, http.StatusBadRequest, errCode)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ru, errCode := s.usableResponseURLLocked(req.PathValue("id"))
	if errCode != "" {
		replyResponseURL(w, http.StatusNotFound, errCode)
		return
	}
	ru.uses++
	if msg.ResponseType == "" {
		msg.ResponseType = "ephemeral"
	}
	s.responses = append(s.responses, Response{
		URL: s.URL + req.URL.Path, EnvelopeID: ru.envelopeID, Text: msg.Text, Blocks: msg.Blocks,
		ResponseType: msg.ResponseType, ReplaceOriginal: msg.ReplaceOriginal, DeleteOriginal: msg.DeleteOriginal,
		ThreadTS: msg.ThreadTS, Body: body, At: time.Now(),
	})
	s.applyResponseLocked(ru, msg)
	s.notifyLocked()
	replyResponseURL(w, http.StatusOK, "")
}

// readResponseURLMessage reads and checks a response_url POST's message;
// errCode says why Slack would refuse it.
func readResponseURLMessage(req *http.Request) (body []byte, msg responseURLMessage, errCode string) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
	if err != nil || json.Unmarshal(body, &msg) != nil {
		return nil, msg, "invalid_payload"
	}
	if string(msg.Blocks) == "null" {
		msg.Blocks = nil
	}
	if msg.Blocks != nil && blockLimits(msg.Blocks) != "" {
		return nil, msg, ErrInvalidBlocks
	}
	if utf8.RuneCountInString(msg.Text) > maxMessageText {
		return nil, msg, ErrMsgTooLong
	}
	return body, msg, ""
}

// usableResponseURLLocked is response_url id when it may be used again;
// errCode says why not.
func (s *Server) usableResponseURLLocked(id string) (*responseURL, string) {
	ru, ok := s.respURLs[id]
	switch {
	case !ok:
		return nil, "invalid_token"
	case s.cfg.clock.Since(ru.created) > responseURLTTL:
		return nil, "expired_url"
	case ru.uses >= responseURLUses:
		return nil, "used_url"
	}
	return ru, ""
}

// applyResponseLocked applies a response's effect on the channel, so that
// conversations.history sees it: the original message replaced or
// deleted, or a new message in the channel.
func (s *Server) applyResponseLocked(ru *responseURL, msg responseURLMessage) {
	if orig := s.findMessageLocked(ru.channel, ru.messageTS); orig != nil && ru.messageTS != "" {
		switch {
		case msg.DeleteOriginal:
			orig.deleted = true
		case msg.ReplaceOriginal:
			orig.text, orig.blocks, orig.edited = msg.Text, msg.Blocks, s.nextTSLocked()
		}
	}
	if msg.ResponseType == "in_channel" && !msg.ReplaceOriginal && !msg.DeleteOriginal && ru.channel != "" {
		m := &storedMessage{channel: ru.channel, ts: s.nextTSLocked(), text: msg.Text, blocks: msg.Blocks}
		if msg.ThreadTS != "" && s.findMessageLocked(ru.channel, msg.ThreadTS) != nil {
			m.threadTS = msg.ThreadTS
		}
		s.history[ru.channel] = append(s.history[ru.channel], m)
	}
}
