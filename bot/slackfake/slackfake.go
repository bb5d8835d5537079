package slackfake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Default credentials and identities of a fake workspace.
const (
	DefaultBotToken = "xoxb-fake"
	DefaultAppToken = "xapp-fake"
	DefaultTeamID   = "T0001"
	DefaultAppID    = "A0001"
	DefaultBotID    = "B0001"
	DefaultBotUser  = "U0BOT"
)

// Slack error codes the fake returns, exported so tests can compare with
// the text of a slack.SlackErrorResponse.
const (
	ErrNotAuthed           = "not_authed"
	ErrInvalidAuth         = "invalid_auth"
	ErrNotAllowedTokenType = "not_allowed_token_type"
	ErrUnknownMethod       = "unknown_method"
	ErrInvalidArguments    = "invalid_arguments"
	ErrChannelNotFound     = "channel_not_found"
	ErrNoText              = "no_text"
	ErrInvalidBlocks       = "invalid_blocks"
	ErrMessageNotFound     = "message_not_found"
	ErrUserNotFound        = "user_not_found"
	ErrUsersNotFound       = "users_not_found"
	ErrInvalidTriggerID    = "invalid_trigger_id"
	ErrExpiredTriggerID    = "expired_trigger_id"
	// ErrTriggerExchanged is what views.open answers for a trigger_id that
	// was already used. Slack's views.* documentation names it
	// "exchanged_trigger_id" (dialog.open used "trigger_exchanged").
	ErrTriggerExchanged = "exchanged_trigger_id"
	ErrViewNotFound     = "not_found"
	ErrHashConflict     = "hash_conflict"
	ErrRateLimited      = "ratelimited"
)

// TriggerTTL is how long a trigger_id can be exchanged for a view; Slack
// documents three seconds. The fake measures it on its injected clock.
const TriggerTTL = 3 * time.Second

// MaxAckSize is the size from which Slack silently drops a socket-mode
// acknowledgement frame (20 KiB).
const MaxAckSize = 20 * 1024

// responseURLUses is how many times Slack accepts a POST to one response_url.
const responseURLUses = 5

// responseURLTTL is how long a response_url stays usable on Slack.
const responseURLTTL = 30 * time.Minute

// User is a member of the fake workspace. A user without Email is served
// without profile.email, which is what Slack does when the bot token lacks
// the users:read.email scope.
type User struct {
	ID       string
	Name     string
	RealName string
	Email    string
	TeamID   string // default: the fake's; another makes a Slack Connect guest, whose messages carry it (user_team)
	IsBot    bool
	Deleted  bool
}

// Channel is a named conversation of the fake workspace, so that messages
// may be posted to "#name" as well as to its ID.
type Channel struct {
	ID   string
	Name string
}

// UserGroup is a user group (Slack's "subteam") of the fake workspace,
// listed by usergroups.list so that a bot can turn an @handle into the
// group's id, and its members by usergroups.users.list. Handle is without
// the '@'.
type UserGroup struct {
	ID       string
	Handle   string
	Name     string
	Users    []string // member user ids, listed with include_users=true
	Disabled bool     // listed only with include_disabled=true
}

// Option configures a Server.
type Option func(*config)

type config struct {
	botToken     string
	appToken     string
	teamID       string
	teamName     string
	appID        string
	botID        string
	botUserID    string
	botUserName  string
	pingInterval time.Duration
	clock        clockwork.Clock
	users        []User
	channels     []Channel
	userGroups   []UserGroup
}

// WithBotToken sets the xoxb- token the Web API accepts.
func WithBotToken(token string) Option { return func(c *config) { c.botToken = token } }

// WithAppToken sets the xapp- token apps.connections.open accepts.
func WithAppToken(token string) Option { return func(c *config) { c.appToken = token } }

// WithTeamID sets the workspace (team) id put in payloads and auth.test.
func WithTeamID(id string) Option { return func(c *config) { c.teamID = id } }

// WithAppID sets the api_app_id put in payloads.
func WithAppID(id string) Option { return func(c *config) { c.appID = id } }

// WithBotUser sets the bot's user id and name reported by auth.test and
// used as the author of posted messages.
func WithBotUser(id, name string) Option {
	return func(c *config) { c.botUserID, c.botUserName = id, name }
}

// WithPingInterval sets how often the fake sends websocket pings. The
// client reconnects when it sees none within its own ping interval.
func WithPingInterval(d time.Duration) Option { return func(c *config) { c.pingInterval = d } }

// WithClock injects the clock used for trigger expiry, response_url expiry
// and message timestamps. Pings and ack latencies use wall time.
func WithClock(clk clockwork.Clock) Option { return func(c *config) { c.clock = clk } }

// WithUsers adds workspace members at start-up (see AddUser).
func WithUsers(users ...User) Option {
	return func(c *config) { c.users = append(c.users, users...) }
}

// WithChannels adds named channels at start-up (see AddChannel).
func WithChannels(chs ...Channel) Option {
	return func(c *config) { c.channels = append(c.channels, chs...) }
}

// WithUserGroups adds user groups at start-up (see AddUserGroup).
func WithUserGroups(groups ...UserGroup) Option {
	return func(c *config) { c.userGroups = append(c.userGroups, groups...) }
}

// Server is a running fake Slack. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the fake, e.g. http://127.0.0.1:12345.
	URL string

	cfg config
	srv *httptest.Server
	wg  sync.WaitGroup // websocket handlers and pingers

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	closed  bool

	users    map[string]User
	groups   map[string]UserGroup // by id
	channels map[string]Channel   // by name, without '#'
	ims      map[string]bool      // opened DM channel ids

	lastTS   time.Time
	seq      int
	history  map[string][]*storedMessage // channel id -> messages, oldest first
	views    map[string]*storedView      // by view id
	triggers map[string]*trigger
	respURLs map[string]*responseURL
	tickets  map[string]bool // one-time websocket tickets
	faults   map[string][]fault

	conns       []*wsConn
	nextConn    int
	connsOpened int
	acks        map[string][]Ack     // envelope id -> acks, in arrival order
	delivered   map[string]time.Time // envelope id -> last delivery

	// recorders
	messages  []Message
	viewLog   []View
	responses []Response
	calls     []Call
	ackLog    []Ack
	unfurls   []Unfurl
	composer  map[string][]string // unfurl_id -> links shared in a composer (fromchat.go)
}

// New starts a fake Slack. Close it when done.
func New(opts ...Option) *Server {
	cfg := config{
		botToken:     DefaultBotToken,
		appToken:     DefaultAppToken,
		teamID:       DefaultTeamID,
		teamName:     "fake",
		appID:        DefaultAppID,
		botID:        DefaultBotID,
		botUserID:    DefaultBotUser,
		botUserName:  "deskbot",
		pingInterval: 200 * time.Millisecond,
		clock:        clockwork.NewRealClock(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{
		cfg:       cfg,
		changed:   make(chan struct{}),
		users:     map[string]User{},
		groups:    map[string]UserGroup{},
		channels:  map[string]Channel{},
		ims:       map[string]bool{},
		history:   map[string][]*storedMessage{},
		views:     map[string]*storedView{},
		triggers:  map[string]*trigger{},
		respURLs:  map[string]*responseURL{},
		tickets:   map[string]bool{},
		faults:    map[string][]fault{},
		acks:      map[string][]Ack{},
		delivered: map[string]time.Time{},
	}
	for _, u := range cfg.users {
		s.AddUser(u)
	}
	for _, c := range cfg.channels {
		s.AddChannel(c)
	}
	for _, g := range cfg.userGroups {
		s.AddUserGroup(g)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("GET /link/", s.serveWebsocket)
	mux.HandleFunc("/response/{id}", s.serveResponseURL)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// APIURL is the Web API base to pass to slack.OptionAPIURL; it ends with
// "/" because slack-go appends method names by plain concatenation.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// BotToken is the bot token the fake accepts.
func (s *Server) BotToken() string { return s.cfg.botToken }

// AppToken is the app-level token the fake accepts.
func (s *Server) AppToken() string { return s.cfg.appToken }

// TeamID is the fake workspace's id.
func (s *Server) TeamID() string { return s.cfg.teamID }

// Close closes every websocket, stops the pingers and shuts the server
// down; no goroutine of the fake outlives it.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := slices.Clone(s.conns)
	s.conns = nil
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.close(websocketGoingAway)
	}
	s.wg.Wait()
	s.srv.Close()
}

// AddUser adds or replaces a workspace member.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.TeamID == "" {
		u.TeamID = s.cfg.teamID
	}
	if u.Name == "" {
		u.Name = strings.ToLower(u.ID)
	}
	s.users[u.ID] = u
}

// AddUserGroup adds or replaces (by ID) a user group; a leading '@' of
// Handle is dropped.
func (s *Server) AddUserGroup(g UserGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g.Handle = strings.TrimPrefix(g.Handle, "@")
	g.Users = slices.Clone(g.Users)
	s.groups[g.ID] = g
}

// AddChannel adds a named channel so "#name" resolves to its ID.
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[strings.TrimPrefix(c.Name, "#")] = c
}

// Reset clears the recorders (Messages, Views, Responses, Calls, Acks) and
// pending faults. Workspace state stays: users, channel history, views,
// triggers and connections.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages, s.viewLog, s.responses, s.calls, s.ackLog = nil, nil, nil, nil, nil
	s.faults = map[string][]fault{}
	s.notifyLocked()
}

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor blocks until check (called with s.mu held) reports true, the
// server closes, or ctx ends.
func (s *Server) waitFor(ctx context.Context, what string, check func() bool) error {
	for {
		s.mu.Lock()
		if check() {
			s.mu.Unlock()
			return nil
		}
		if s.closed {
			s.mu.Unlock()
			return fmt.Errorf("wait for %s: %w", what, ErrClosed)
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		}
	}
}

// Wait blocks until cond reports true, the server closes, or ctx ends.
// cond is called without the server's lock, after every change of the
// recorded state (messages, responses, views, calls), so it may read the
// server through its inspection methods (Messages, Responses, ...).
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		if closed {
			return fmt.Errorf("wait: %w", ErrClosed)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait: %w", ctx.Err())
		}
	}
}

// ErrClosed is returned by waits and sends on a closed Server.
var ErrClosed = errors.New("slackfake: server closed")

// nextTSLocked returns a message timestamp ("seconds.micros") strictly
// greater than every earlier one, following the injected clock.
func (s *Server) nextTSLocked() string {
	now := s.cfg.clock.Now().Truncate(time.Microsecond)
	if !now.After(s.lastTS) {
		now = s.lastTS.Add(time.Microsecond)
	}
	s.lastTS = now
	return fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
}

// nextIDLocked returns a Slack-looking id with the given prefix.
func (s *Server) nextIDLocked(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%08X", prefix, s.seq)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newEnvelopeID() string {
	h := randomHex(16)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// userJSONLocked renders a user as Slack's users.info does.
func (s *Server) userJSONLocked(u User) map[string]any {
	profile := map[string]any{
		"real_name":               u.RealName,
		"real_name_normalized":    u.RealName,
		"display_name":            u.Name,
		"display_name_normalized": u.Name,
		"team":                    u.TeamID,
	}
	if u.Email != "" {
		profile["email"] = u.Email
	}
	return map[string]any{
		"id":        u.ID,
		"team_id":   u.TeamID,
		"name":      u.Name,
		"deleted":   u.Deleted,
		"real_name": u.RealName,
		"is_bot":    u.IsBot,
		"is_admin":  false,
		"tz":        "Europe/Zurich",
		"profile":   profile,
	}
}

// redactForm copies a form, replacing the token.
func redactForm(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		if k == "token" {
			out[k] = []string{"REDACTED"}
			continue
		}
		out[k] = slices.Clone(vs)
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("slackfake: marshal %T: %v", v, err))
	}
	return b
}
