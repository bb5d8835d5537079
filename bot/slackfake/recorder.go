package slackfake

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"time"
)

// Message is one chat.postMessage, chat.postEphemeral, chat.update or
// chat.delete as the fake applied it. Every call appends one record, so an
// edited message appears once as posted and once more with Updated set.
type Message struct {
	Method    string // chat.postMessage, chat.postEphemeral, chat.update, chat.delete
	Channel   string // channel id (names are resolved)
	TS        string
	ThreadTS  string // thread parent, empty for top-level messages
	Text      string
	Blocks    json.RawMessage // the blocks JSON as posted, nil without blocks
	User      string          // recipient of an ephemeral message
	Ephemeral bool
	Updated   bool
	Deleted   bool
	At        time.Time // wall time the fake applied it
}

// View is one views.open, views.push or views.update as recorded.
type View struct {
	Method          string // views.open, views.push, views.update
	ID              string
	TriggerID       string
	UserID          string // who the view was opened for
	CallbackID      string
	PrivateMetadata string
	ExternalID      string
	Hash            string
	RootViewID      string
	PreviousViewID  string
	Raw             json.RawMessage // the view JSON as sent by the bot
}

// Response is one POST the bot made to a response_url handed out with a
// slash command or interaction.
type Response struct {
	URL             string
	EnvelopeID      string // the envelope that carried the response_url
	Text            string
	Blocks          json.RawMessage
	ResponseType    string // "ephemeral" (Slack's default) or "in_channel"
	ReplaceOriginal bool
	DeleteOriginal  bool
	ThreadTS        string
	Body            json.RawMessage
	At              time.Time // wall time the fake accepted it
}

// Call is one Web API request. The token is redacted from Form and
// Authorization.
type Call struct {
	Method        string
	ContentType   string
	Form          url.Values      // form-posted parameters (token "REDACTED")
	JSON          json.RawMessage // JSON body, for JSON posts
	Authorization string          // "Bearer REDACTED" when the header was sent
	Status        int             // HTTP status answered
	Error         string          // the ok:false error answered, "" on success
}

// Ack is one acknowledgement frame read from a socket-mode connection.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil when the ack carried no payload
	Latency    time.Duration   // from the envelope's delivery to the ack
	ReceivedAt time.Time
	Size       int  // frame size in bytes
	Dropped    bool // the frame was MaxAckSize or more; Slack ignores it
	Unknown    bool // no envelope with this id was delivered
}

// Messages returns every recorded message operation, oldest first.
func (s *Server) Messages() []Message {
	return cloned(s, &s.messages)
}

// WaitMessage waits for a recorded message matching pred (nil matches any)
// and returns the first one.
func (s *Server) WaitMessage(ctx context.Context, pred func(Message) bool) (Message, error) {
	return waitFirst(ctx, s, "message", &s.messages, pred)
}

// Views returns every recorded views.* call, oldest first.
func (s *Server) Views() []View {
	return cloned(s, &s.viewLog)
}

// WaitView waits for a recorded view operation matching pred (nil matches any).
func (s *Server) WaitView(ctx context.Context, pred func(View) bool) (View, error) {
	return waitFirst(ctx, s, "view", &s.viewLog, pred)
}

// Responses returns every POST to a response_url, oldest first.
func (s *Server) Responses() []Response {
	return cloned(s, &s.responses)
}

// WaitResponse waits for a response_url POST matching pred (nil matches any).
func (s *Server) WaitResponse(ctx context.Context, pred func(Response) bool) (Response, error) {
	return waitFirst(ctx, s, "response_url post", &s.responses, pred)
}

// Calls returns every Web API request, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Form = redactForm(c.Form)
		out[i] = c
	}
	return out
}

// UnknownMethods returns the Web API methods called that the fake does not
// implement, in call order, so a test can fail on a missing stub.
func (s *Server) UnknownMethods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		if c.Error == ErrUnknownMethod {
			out = append(out, c.Method)
		}
	}
	return out
}

// Acks returns every ack frame read, in arrival order.
func (s *Server) Acks() []Ack {
	return cloned(s, &s.ackLog)
}

// History returns the messages Slack would list in conversations.history
// for a channel (top-level, not deleted, not ephemeral), newest first.
func (s *Server) History(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	msgs := s.history[channel]
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].inHistory() {
			out = append(out, msgs[i].record("", false))
		}
	}
	return out
}

// waitFirst waits until a record of *list (read under the server's lock)
// matches pred (nil matches any) and returns the first that does; what
// names the records in the error of a wait that times out.
func waitFirst[T any](ctx context.Context, s *Server, what string, list *[]T, pred func(T) bool) (T, error) {
	var found T
	err := s.waitFor(ctx, what, func() bool {
		for _, r := range *list {
			if pred == nil || pred(r) {
				found = r
				return true
			}
		}
		return false
	})
	return found, err
}

// cloned is a copy of *list, taken under the server's lock.
func cloned[T any](s *Server, list *[]T) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(*list)
}
