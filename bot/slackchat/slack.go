package slackchat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deskbot/deskbot/bot/internal/flight"
	"github.com/deskbot/deskbot/sdclient"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// Router is what the Slack transport needs of the bot's router
// (*bot.Router). It is declared here, by its consumer, so that this package
// does not import bot.
type Router interface {
	// Dispatch runs one command and answers it.
	Dispatch(ctx context.Context, caller chat.Caller, cmd chat.Command) chat.Reply
	// NeedsDesk reports whether cmd may call the desk (and so is admitted).
	NeedsDesk(cmd chat.Command) bool
	// Admit admits a command that calls the desk, or says why not.
	Admit() (chat.Admission, string)
	// AlertCard is an alert's ticket card with its buttons.
	AlertCard(ctx context.Context, m chat.AlertMessage) *chat.Card
	// PageTicketCard is the ticket and card a page card shows.
	PageTicketCard(ctx context.Context, ticketID int64) (*sdclient.Ticket, *chat.Card)
	// TicketLink is a ticket's link, "" when none is configured.
	TicketLink(id int64) string
	// Warm fills the router's caches.
	Warm(ctx context.Context)
	FromChat // tickets from messages, link unfurls (fromchat.go)
}

// failed is an error answer.
func failed(text string) chat.Reply { return chat.Reply{Text: text, Failed: true} }

// cached is a value looked up at a time.
type cached[T any] struct {
	v  T
	at time.Time
	ok bool
}

// Slack is the socket-mode Slack transport: it acks every envelope at
// once, drops redeliveries, runs commands through the Router and answers
// through response_url (or chat.postEphemeral). It is also the chat.Notifier for
// alerts. Run it with Run; it reconnects on its own.
type Slack struct {
	router    Router
	log       *slog.Logger
	api       *slack.Client
	http      *http.Client
	envelopes EnvelopeStore
	teamID    string
	now       func() time.Time
	dedupTTL  time.Duration
	lookback  time.Duration
	minWait   time.Duration
	maxWait   time.Duration
	emailTTL  time.Duration
	pingEvery time.Duration
	groupTTL  time.Duration
	groupWait time.Duration
	reaction  string       // the emoji that makes a ticket of a message; "": none
	threads   threadConfig // live threads (threads.go)
	// allowed are the other teams whose people act as themselves in
	// shared (Slack Connect) channels; everyone else of another team acts
	// as nobody of ours (see ourTeam).
	allowed map[string]bool

	ready    atomic.Bool
	refusing atomic.Bool  // the gate is answering busy (logged once a burst)
	jobs     atomic.Int64 // envelopes being handled and their jobs not finished (tests)
	arrived  atomic.Int64 // when the last command envelope came (unix ns)
	busyLane chan struct{}
	team     atomic.Value // string: the team served
	org      atomic.Value // string: its Enterprise Grid organisation, "" when none or unknown
	wg       sync.WaitGroup

	mu            sync.Mutex
	emails        map[string]cached[string] // users.info cache by user id
	lookups       flight.Group[string]
	channels      map[string]string           // channel name -> id
	userIDs       map[string]cached[string]   // users.lookupByEmail cache by lower-case e-mail
	cards         map[string]cardLoc          // page key -> where its card is
	draws         cardDraws                   // orders the redraws of each page card
	groups        groupCache                  // usergroups.list: @handle -> id
	members       map[string]cached[[]string] // usergroups.users.list by group id
	memberLookups flight.Group[[]string]
	home          homeState // home.go
}

var (
	_ chat.Notifier  = (*Slack)(nil)
	_ chat.Directory = (*Slack)(nil)
)

// Option configures a Slack transport. Options only record a value;
// NewSlack checks them and returns the error.
type Option func(*config)

// config is what the Slack options set; NewSlack checks it.
type config struct {
	apiURL       string
	http         *http.Client
	httpSet      bool
	envelopes    EnvelopeStore
	envelopesSet bool
	teamID       string
	allowedTeams []string
	now          func() time.Time
	minWait      time.Duration
	maxWait      time.Duration
	lookback     time.Duration
	pingEvery    time.Duration
	reaction     string
	threads      threadConfig // live threads (threads.go)
}

// WithAPIURL points the client at another Web API base
// (DESKBOT_SLACK_API_URL: tests, proxies); a missing final "/" is added.
// An empty URL keeps Slack's.
func WithAPIURL(u string) Option {
	return func(c *config) {
		if u != "" {
			c.apiURL = u
		}
	}
}

// WithHTTPClient sets the HTTP client for the Web API and response_url
// posts (default: a client with a 15 s timeout). The transport uses a copy
// of it whose calls are bounded and retried (slackhttp.go).
func WithHTTPClient(h *http.Client) Option {
	return func(c *config) { c.http, c.httpSet = h, true }
}

// WithEnvelopeStore sets where delivered envelope ids are remembered;
// share one store between replicas (default: in memory).
func WithEnvelopeStore(s EnvelopeStore) Option {
	return func(c *config) { c.envelopes, c.envelopesSet = s, true }
}

// WithTeamID fixes the Slack team served; envelopes from any other team
// are refused. Default: the bot token's team, from auth.test.
func WithTeamID(id string) Option {
	return func(c *config) { c.teamID = id }
}

// WithAllowedTeams names other Slack teams (ids) whose people act as
// themselves in shared (Slack Connect) channels. By default only the
// served team's people (and those of its Enterprise Grid organisation)
// do: a person of another organisation whose e-mail happens to match one
// of the desk's is nobody to deskbot.
func WithAllowedTeams(ids ...string) Option {
	return func(c *config) { c.allowedTeams = append(c.allowedTeams, ids...) }
}

// WithClock sets the clock for de-duplication and caches (tests).
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithReconnectBackoff bounds the wait between reconnect attempts after the
// socket-mode client gave up (default 1s doubling to 2m, with jitter).
func WithReconnectBackoff(min, max time.Duration) Option {
	return func(c *config) { c.minWait, c.maxWait = min, max }
}

// WithAlertLookback sets how far back AlreadyAlerted searches a channel
// (default 24h).
func WithAlertLookback(d time.Duration) Option {
	return func(c *config) { c.lookback = d }
}

// WithPingInterval sets how long the socket may stay silent before the
// client reconnects (socket-mode default 30s).
func WithPingInterval(d time.Duration) Option {
	return func(c *config) { c.pingEvery = d }
}

// check refuses values no option may set, and completes the API URL.
func (c *config) check() error {
	switch {
	case !strings.HasPrefix(c.apiURL, "http://") && !strings.HasPrefix(c.apiURL, "https://"):
		return fmt.Errorf("slackchat: WithAPIURL: %q is not an http(s) URL", c.apiURL)
	case c.httpSet && c.http == nil:
		return errors.New("slackchat: WithHTTPClient: nil client")
	case c.envelopesSet && c.envelopes == nil:
		return errors.New("slackchat: WithEnvelopeStore: nil store")
	case c.now == nil:
		return errors.New("slackchat: WithClock: nil clock")
	case c.minWait <= 0 || c.maxWait < c.minWait:
		return fmt.Errorf("slackchat: WithReconnectBackoff: want 0 < min <= max, got %s, %s", c.minWait, c.maxWait)
	case c.lookback <= 0:
		return fmt.Errorf("slackchat: WithAlertLookback: %s is not positive", c.lookback)
	case c.reaction != "" && !ValidReaction(c.reaction):
		return fmt.Errorf("slackchat: WithTicketReaction: %q is not an emoji name", c.reaction)
	}
	if !strings.HasSuffix(c.apiURL, "/") {
		c.apiURL += "/"
	}
	return nil
}

// NewSlack builds the Slack transport. botToken is the xoxb- token,
// appToken the xapp- token (scope connections:write).
func New(router Router, log *slog.Logger, botToken, appToken string, opts ...Option) (*Slack, error) {
	if router == nil || log == nil {
		return nil, errors.New("slackchat: New: nil router or logger")
	}
	if !strings.HasPrefix(botToken, "xoxb-") {
		return nil, errors.New("slackchat: New: the bot token must start with xoxb-")
	}
	if !strings.HasPrefix(appToken, "xapp-") {
		return nil, errors.New("slackchat: New: the app-level token must start with xapp-")
	}
	cfg := config{
		apiURL:   slack.APIURL,
		now:      time.Now,
		minWait:  time.Second,
		maxWait:  2 * time.Minute,
		lookback: 24 * time.Hour,
		reaction: DefaultTicketReaction,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.envelopes == nil {
		cfg.envelopes = &MemoryEnvelopes{}
	}
	s := &Slack{
		router:    router,
		log:       log,
		http:      slackHTTPClient(cfg.http, log),
		envelopes: cfg.envelopes,
		teamID:    cfg.teamID,
		now:       cfg.now,
		dedupTTL:  time.Hour,
		lookback:  cfg.lookback,
		minWait:   cfg.minWait,
		maxWait:   cfg.maxWait,
		emailTTL:  time.Hour,
		pingEvery: cfg.pingEvery,
		groupTTL:  defaultGroupTTL,
		groupWait: defaultGroupWait,
		reaction:  cfg.reaction,
		threads:   cfg.threads,
		allowed:   make(map[string]bool),
		emails:    make(map[string]cached[string]),
		channels:  make(map[string]string),
		userIDs:   make(map[string]cached[string]),
		cards:     make(map[string]cardLoc),
		members:   make(map[string]cached[[]string]),
		busyLane:  make(chan struct{}, maxSlackCalls),
	}
	s.api = slack.New(botToken,
		slack.OptionAppLevelToken(appToken),
		slack.OptionAPIURL(cfg.apiURL),
		slack.OptionHTTPClient(s.http),
		slack.OptionLog(slog.NewLogLogger(log.Handler(), slog.LevelDebug)),
	)
	for _, id := range cfg.allowedTeams {
		if id = strings.TrimSpace(id); id != "" {
			s.allowed[id] = true
		}
	}
	s.team.Store(cfg.teamID)
	s.org.Store("")
	return s, nil
}

// Ready reports whether the socket-mode connection is up (for /readyz).
func (s *Slack) Ready() bool { return s.ready.Load() }

// ErrSlackAuth is returned by Run when Slack refuses the tokens; retrying
// cannot help.
var ErrSlackAuth = errors.New("slack refused the tokens")

func isAuthError(err error) bool {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "invalid_auth", "account_inactive", "not_authed", "token_revoked", "not_allowed_token_type":
			return true
		}
	}
	switch err.Error() {
	case "invalid_auth", "account_inactive", "not_authed", "token_revoked", "not_allowed_token_type":
		return true
	}
	var sc slack.StatusCodeError
	return errors.As(err, &sc) && sc.Code == http.StatusNotFound
}

// Run connects and serves until ctx ends (then it returns nil after the
// running commands finished). The socket-mode client reconnects by itself;
// when it gives up, Run starts it again with backoff, except when Slack
// refuses the tokens: then Run returns an error wrapping ErrSlackAuth.
func (s *Slack) Run(ctx context.Context) error {
	defer s.http.CloseIdleConnections()
	defer s.wg.Wait()
	defer s.ready.Store(false)
	s.wg.Go(func() { s.router.Warm(ctx) })
	wait := s.minWait
	for {
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && isAuthError(err) {
			return fmt.Errorf("slack socket mode: %w: %v (check SLACK_BOT_TOKEN and SLACK_APP_TOKEN)", ErrSlackAuth, err)
		}
		d := wait/2 + rand.N(wait/2+1)
		s.log.Warn("slack connection ended; reconnecting", "err", err, "in", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(wait*2, s.maxWait)
	}
}

func (s *Slack) runOnce(ctx context.Context) error {
	if s.team.Load().(string) == "" {
		at, err := s.api.AuthTestContext(ctx)
		if err != nil {
			return fmt.Errorf("auth.test: %w", err)
		}
		s.team.Store(at.TeamID)
		s.org.Store(at.EnterpriseID)
	}
	opts := []socketmode.Option{socketmode.OptionLog(slog.NewLogLogger(s.log.Handler(), slog.LevelDebug))}
	if s.pingEvery > 0 {
		opts = append(opts, socketmode.OptionPingInterval(s.pingEvery))
	}
	sm := socketmode.New(s.api, opts...)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	for {
		select {
		case err := <-done:
			s.ready.Store(false)
			return err
		case evt := <-sm.Events:
			s.event(ctx, sm, evt)
		}
	}
}

// event handles one socket-mode event; it never blocks on desk work. Every
// envelope with an envelope_id is acked exactly once, those the client
// could not parse included (Slack redelivers an envelope it saw no ack
// for, for ever and on every connection).
func (s *Slack) event(ctx context.Context, sm acker, evt socketmode.Event) {
	// The envelope counts as work under way from before its ack until its
	// job (if any) is spawned, so that whoever saw the ack and then waits
	// for the work to end does not find none started yet.
	s.jobs.Add(1)
	defer s.jobs.Add(-1)
	switch evt.Type {
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		s.ready.Store(true)
	case socketmode.EventTypeConnecting, socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect, socketmode.EventTypeInvalidAuth:
		s.ready.Store(false)
	case socketmode.EventTypeErrorBadMessage:
		s.badEnvelope(sm, evt)
	case socketmode.EventTypeIncomingError:
		// A frame that is not JSON at all: there is no envelope id to ack.
		err := errors.New("unknown")
		if e, ok := evt.Data.(*slack.IncomingEventError); ok && e != nil {
			err = e.ErrorObj
		}
		s.log.Warn("dropped an unreadable socket-mode frame (no envelope id to ack)", "err", err)
	case socketmode.EventTypeSlashCommand:
		s.arrived.Store(time.Now().UnixNano())
		cmd, ok := evt.Data.(slack.SlashCommand)
		if evt.Request == nil {
			return
		}
		_ = sm.Ack(*evt.Request)
		if !ok {
			s.log.Warn("acked a slash command envelope without a command", "envelope", evt.Request.EnvelopeID)
			return
		}
		j := job{
			run: func(ctx context.Context) { s.slash(ctx, cmd) },
			sorry: func(ctx context.Context) {
				s.answer(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, failed(chat.PanicText(cmd.Command)), false)
			},
		}
		if s.router.NeedsDesk(chat.Command{Slash: cmd.Command, Text: cmd.Text}) {
			j.busy = func(ctx context.Context, text string) {
				s.answer(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, failed(text), false)
			}
		}
		s.spawn(ctx, evt.Request, j)
	case socketmode.EventTypeInteractive:
		s.arrived.Store(time.Now().UnixNano())
		cb, ok := evt.Data.(slack.InteractionCallback)
		if evt.Request == nil {
			return
		}
		if !ok {
			_ = sm.Ack(*evt.Request)
			s.log.Warn("acked an interactive envelope without an interaction", "envelope", evt.Request.EnvelopeID)
			return
		}
		switch cb.Type {
		case slack.InteractionTypeMessageAction:
			_ = sm.Ack(*evt.Request)
			s.shortcut(ctx, evt.Request, cb)
		case slack.InteractionTypeViewSubmission:
			if cb.View.CallbackID == messageFormCallbackID {
				s.submitMessageForm(ctx, sm, evt.Request, cb)
				return
			}
			if cb.View.CallbackID != formCallbackID {
				_ = sm.Ack(*evt.Request)
				s.ignored(evt)
				return
			}
			v := formValues(cb.View.State)
			if strings.TrimSpace(v.Subject) == "" {
				_ = sm.Ack(*evt.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{formSubject: "a ticket needs a subject"}))
				return
			}
			// Admitted before the ack: when busy, the form stays open with
			// what was typed, and the ack says when to submit it again.
			p, busy := s.router.Admit()
			if p == nil {
				_ = sm.Ack(*evt.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{formSubject: busy}))
				return
			}
			_ = sm.Ack(*evt.Request)
			s.spawn(ctx, evt.Request, job{
				pass: p,
				run:  func(ctx context.Context) { s.submit(ctx, cb, v) },
				busy: func(ctx context.Context, text string) {
					s.answer(ctx, "", cb.User.ID, cb.User.ID, failed(text+" (your ticket was not opened: "+v.Subject+")"), false)
				},
				sorry: func(ctx context.Context) {
					s.answer(ctx, "", cb.User.ID, cb.User.ID, failed(chat.PanicText("/ticket new")), false)
				},
			})
		case slack.InteractionTypeBlockActions:
			_ = sm.Ack(*evt.Request)
			channel := cmp.Or(cb.Channel.ID, cb.Container.ChannelID)
			s.spawn(ctx, evt.Request, job{
				run: func(ctx context.Context) { s.click(ctx, cb) },
				busy: func(ctx context.Context, text string) {
					s.answer(ctx, "", channel, cb.User.ID, failed(text), false)
				},
				sorry: func(ctx context.Context) {
					s.answer(ctx, "", channel, cb.User.ID, failed(chat.PanicText("that button")), false)
				},
			})
		default:
			_ = sm.Ack(*evt.Request)
			s.ignored(evt)
		}
	case socketmode.EventTypeEventsAPI:
		handled := false
		if evt.Request != nil {
			_ = sm.Ack(*evt.Request)
			handled = s.fromChatEvent(ctx, evt)
			handled = s.threadEvent(ctx, evt) || handled // live threads (threads.go)
		}
		if !s.homeEvent(ctx, evt) && !handled {
			s.ignored(evt)
		}
	default:
		if evt.Request != nil && evt.Request.EnvelopeID != "" {
			_ = sm.Ack(*evt.Request)
			s.ignored(evt)
		}
	}
}

// ignored logs, at debug level, an envelope deskbot has nothing to do with
// (an event it does not act on, an interaction of another app's or with
// empty fields): which, not its content.
func (s *Slack) ignored(evt socketmode.Event) {
	var id, typ, inner string
	if evt.Request != nil {
		id, typ = evt.Request.EnvelopeID, evt.Request.Type
	}
	switch d := evt.Data.(type) {
	case slackevents.EventsAPIEvent:
		inner = d.InnerEvent.Type
	case slack.InteractionCallback:
		inner = string(d.Type)
	}
	s.log.Debug("ignored an envelope", "envelope", id, "type", typ, "event", inner)
}

// acker is the part of *socketmode.Client that event uses.
type acker interface {
	Ack(req socketmode.Request, payload ...any) error
}

// badEnvelope acks a message the socket-mode client could not parse (a
// payload that does not decode as its type says, a type it does not know,
// an envelope with a field of the wrong type) when it has an envelope id,
// and logs it: its size and why, not its content.
func (s *Slack) badEnvelope(sm acker, evt socketmode.Event) {
	bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
	if bad == nil {
		s.log.Warn("dropped an unparseable socket-mode message", "data", fmt.Sprintf("%T", evt.Data))
		return
	}
	var env struct {
		ID   json.RawMessage `json:"envelope_id"`
		Type json.RawMessage `json:"type"`
	}
	_ = json.Unmarshal(bad.Message, &env)
	var id, typ string
	_ = json.Unmarshal(env.ID, &id)
	_ = json.Unmarshal(env.Type, &typ)
	if len(typ) > 64 {
		typ = typ[:64] + "…"
	}
	if id == "" {
		s.log.Warn("dropped an unparseable socket-mode message without an envelope id", "type", typ, "bytes", len(bad.Message), "err", bad.Cause)
		return
	}
	s.log.Warn("acked an envelope that could not be parsed; it is dropped", "envelope", id, "type", typ, "bytes", len(bad.Message), "err", bad.Cause)
	_ = sm.Ack(socketmode.Request{EnvelopeID: id})
}

// job is the work an envelope asks for.
type job struct {
	run func(ctx context.Context)
	// busy answers a command the gate refused; nil: the work is not
	// gated (it makes no desk call).
	busy func(ctx context.Context, text string)
	// sorry answers after a panic; may be nil.
	sorry func(ctx context.Context)
	// pass is the admission when the gate was asked before the ack.
	pass chat.Admission
}

// spawn runs a job in its own goroutine after dropping a redelivered
// envelope, through the gate when the job is gated: it runs on one of the
// gate's workers, or is answered busy. A panic in the job (the router
// recovers its own; this catches the transport's) is logged and answered
// with sorry, and the bot stays up.
func (s *Slack) spawn(ctx context.Context, req *socketmode.Request, j job) {
	id, retry := dedupID(req), req.RetryAttempt
	s.jobs.Add(1)
	s.wg.Go(func() {
		defer s.jobs.Add(-1)
		// The work outlives the connection it came on, but not shutdown.
		ctx := context.WithoutCancel(ctx)
		p := j.pass
		defer func() {
			if p != nil {
				p.Done()
			}
			v := recover()
			if v == nil {
				return
			}
			s.log.Error("envelope handler panicked", "envelope", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if j.sorry == nil {
				return
			}
			defer func() {
				if v := recover(); v != nil {
					s.log.Error("answering a panicked envelope panicked too", "envelope", id, "panic", fmt.Sprint(v))
				}
			}()
			j.sorry(ctx)
		}()
		dup, err := s.envelopes.SeenEnvelope(ctx, id, s.now(), s.dedupTTL)
		if err != nil {
			s.log.Warn("envelope de-duplication failed; handling it anyway", "envelope", id, "err", err)
		}
		if dup {
			s.log.Info("dropped a redelivered envelope", "envelope", id, "retry_attempt", retry)
			return
		}
		if j.busy != nil {
			if p == nil {
				var busy string
				if p, busy = s.router.Admit(); p == nil {
					s.refused(id, busy)
					s.answerBusy(ctx, j, busy)
					return
				}
			}
			if ok, busy := p.Wait(); !ok {
				s.refused(id, busy)
				s.answerBusy(ctx, j, busy)
				return
			}
			s.refusing.Store(false)
			ctx = p.Charge(ctx)
		}
		j.run(ctx)
	})
}

// dedupID is what makes two deliveries the same: an Events API event's
// event_id (Slack retries an event it saw no ack for, or no timely ack,
// with retry_attempt >= 1 and possibly a new envelope, on any connection),
// else the envelope's id.
func dedupID(req *socketmode.Request) string {
	if req.Type == socketmode.RequestTypeEventsAPI {
		var p struct {
			EventID string `json:"event_id"`
		}
		if json.Unmarshal(req.Payload, &p) == nil && p.EventID != "" {
			return "event:" + p.EventID
		}
	}
	return req.EnvelopeID
}

// While a burst of envelopes is arriving, its busy answers wait for a
// pause (ackQuiet without a new envelope), at most maxAckYield: the acks of
// the burst go first (Slack drops an ack after 3 s; a busy answer has
// seconds). Measured with BenchmarkSlashBurst: without the wait the busy
// answers, sent while the burst still arrives, double the acks' p99.
const (
	ackQuiet    = 5 * time.Millisecond
	maxAckYield = 250 * time.Millisecond
)

// answerBusy sends a busy answer once the envelopes stopped arriving (see
// ackQuiet); at most maxSlackCalls are waiting or being sent at once.
func (s *Slack) answerBusy(ctx context.Context, j job, text string) {
	s.busyLane <- struct{}{}
	defer func() { <-s.busyLane }()
	for start := time.Now(); time.Since(start) < maxAckYield; {
		if time.Since(time.Unix(0, s.arrived.Load())) >= ackQuiet {
			break
		}
		time.Sleep(ackQuiet)
	}
	j.busy(ctx, text)
}

// refused logs a command answered busy: each at debug level, the first of
// a burst as a warning.
func (s *Slack) refused(envelope, answer string) {
	if s.refusing.CompareAndSwap(false, true) {
		s.log.Warn("more commands than the desk can serve in time: answering busy", "envelope", envelope, "answer", answer)
		return
	}
	s.log.Debug("answered busy", "envelope", envelope, "answer", answer)
}

// foreignTeam refuses envelopes from a team the bot does not serve.
func (s *Slack) foreignTeam(teamID string) bool {
	want, _ := s.team.Load().(string)
	return want != "" && teamID != want
}

// ourTeam reports whether people of team act as themselves: the served
// team, an allowed one, or any while the served team is not known yet
// (as foreignTeam).
func (s *Slack) ourTeam(team string) bool {
	want, _ := s.team.Load().(string)
	return want == "" || team == want || s.allowed[team]
}

// ourPerson reports whether a Slack user (from users.info) is one of ours:
// of an allowed team, or of the served team's Grid organisation.
func (s *Slack) ourPerson(u *slack.User) bool {
	if s.ourTeam(u.TeamID) {
		return true
	}
	org, _ := s.org.Load().(string)
	return org != "" && u.Enterprise.EnterpriseID == org
}

const foreignTeamText = "this deskbot serves another Slack workspace; your request was not run"

func (s *Slack) slash(ctx context.Context, cmd slack.SlashCommand) {
	if s.foreignTeam(cmd.TeamID) {
		s.log.Warn("refused a command from another team", "team", cmd.TeamID, "user", cmd.UserID)
		s.answer(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, failed(foreignTeamText), false)
		return
	}
	resp := s.router.Dispatch(ctx, chat.Caller{UserID: cmd.UserID, TeamID: cmd.TeamID, ChannelID: cmd.ChannelID, Users: s},
		chat.Command{Slash: cmd.Command, Text: cmd.Text})
	for _, p := range resp.Pages {
		s.refreshPage(ctx, p)
	}
	if resp.Form != nil {
		meta, _ := json.Marshal(formMeta{ResponseURL: cmd.ResponseURL, Channel: cmd.ChannelID})
		_, err := s.api.OpenViewContext(ctx, cmd.TriggerID, ticketModal(resp.Form, string(meta)))
		if err == nil {
			return
		}
		s.log.Warn("open the new-ticket form", "err", err)
		resp = failed("could not open the new-ticket form (" + err.Error() + "); try /ticket new <subject>")
	}
	s.answer(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, s.followInDM(ctx, cmd.UserID, resp), false)
}

// answer sends a Reply: through response_url when there is one, else
// chat.postEphemeral (or chat.postMessage when public).
func (s *Slack) answer(ctx context.Context, responseURL, channel, user string, resp chat.Reply, replace bool) {
	text := messageText(resp)
	var blocks []slack.Block
	if resp.Card != nil {
		blocks = cardBlocks(resp.Card)
	}
	if responseURL != "" {
		msg := &slack.WebhookMessage{Text: text, ResponseType: slack.ResponseTypeEphemeral, ReplaceOriginal: replace}
		if resp.Public {
			msg.ResponseType = slack.ResponseTypeInChannel
		}
		if blocks != nil {
			msg.Blocks = &slack.Blocks{BlockSet: blocks}
		}
		err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg)
		if err == nil {
			return
		}
		s.log.Warn("answer through response_url failed; trying chat.postEphemeral", "err", err)
	}
	// A payload without a channel or user (Slack's recorded samples have
	// them empty) has nobody to answer: nothing is posted to "".
	if (resp.Public && channel == "") || (!resp.Public && user == "") {
		s.log.Debug("nowhere to answer: no channel or user in the payload", "channel", channel, "user", user)
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if blocks != nil {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	var err error
	switch {
	case resp.Public:
		_, _, err = s.api.PostMessageContext(ctx, channel, opts...)
	case channel == "":
		_, _, err = s.api.PostMessageContext(ctx, user, opts...)
	default:
		_, err = s.api.PostEphemeralContext(ctx, channel, user, opts...)
		if err != nil {
			// Not in the channel: the DM always works (im:write).
			_, _, err = s.api.PostMessageContext(ctx, user, opts...)
		}
	}
	if err != nil {
		s.log.Error("could not answer", "user", user, "channel", channel, "err", err)
	}
}

// Email implements chat.Directory with users.info, cached for an hour.
func (s *Slack) Email(ctx context.Context, userID string) (string, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.emails[userID]
	s.mu.Unlock()
	if ok && now.Sub(c.at) < s.emailTTL {
		return c.v, nil
	}
	return s.lookups.Do(userID, func() (string, error) {
		u, err := s.api.GetUserInfoContext(ctx, userID)
		if err != nil {
			return "", fmt.Errorf("users.info %s: %w", userID, err)
		}
		email := u.Profile.Email
		if !s.ourPerson(u) {
			// A person of another organisation in a shared channel: their
			// e-mail may match one of ours, but they are nobody here.
			s.log.Debug("a user of another team acts as nobody", "user", userID, "team", u.TeamID)
			email = ""
		}
		s.mu.Lock()
		s.emails[userID] = cached[string]{v: email, at: now, ok: true}
		s.mu.Unlock()
		return email, nil
	})
}

// click handles a button on a ticket card or an alert.
func (s *Slack) click(ctx context.Context, cb slack.InteractionCallback) {
	if len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	if s.foreignTeam(cb.Team.ID) {
		s.answer(ctx, cb.ResponseURL, channel, cb.User.ID, failed(foreignTeamText), false)
		return
	}
	if s.homeClick(ctx, cb) {
		return
	}
	res := s.router.Dispatch(ctx, chat.Caller{UserID: cb.User.ID, TeamID: cb.Team.ID, ChannelID: channel, Users: s},
		chat.Command{Button: act.ActionID, Value: act.Value})
	if res.Page != nil {
		s.pageClick(ctx, cb, channel, res)
		return
	}
	if res.Failed {
		s.answer(ctx, "", channel, cb.User.ID, failed(res.Text), false)
		return
	}
	for _, p := range res.Pages {
		s.refreshPage(ctx, p)
	}
	headline, activity, isAlert := oldAlert(cb.Message.Blocks.BlockSet)
	ts := cb.Container.MessageTs
	if ts == "" {
		ts = cb.Message.Timestamp
	}
	line := escape(res.Activity) + " · " + s.now().UTC().Format("15:04 UTC")
	if isAlert && !cb.Container.IsEphemeral {
		_, rule, key := chat.SplitButtonValue(act.Value)
		card := *res.Card
		blocks := alertBlocks(alertView{Headline: headline, Rule: rule, Key: key, Card: &card, Activity: append(activity, line)})
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts,
			slack.MsgOptionText(escapeFit(res.Activity, maxMessageText), false), slack.MsgOptionBlocks(blocks...))
		if err != nil {
			s.log.Error("update alert card", "channel", channel, "ts", ts, "err", err)
			s.answer(ctx, "", channel, cb.User.ID, chat.Reply{Text: res.Text + " (the card could not be updated)"}, false)
		}
		return
	}
	card := *res.Card
	card.Notes = append(card.Notes, res.Activity)
	if cb.ResponseURL != "" {
		s.answer(ctx, cb.ResponseURL, channel, cb.User.ID, chat.Reply{Text: res.Text, Card: &card}, true)
		return
	}
	if _, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(escapeFit(res.Text, maxMessageText), false), slack.MsgOptionBlocks(cardBlocks(&card)...)); err != nil {
		s.answer(ctx, "", channel, cb.User.ID, chat.Reply{Text: res.Text}, false)
	}
}

// channelID resolves "#name" or "name" to an id with what the bot saw, then
// conversations.list; failing that the name is passed on as given.
func (s *Slack) channelID(ctx context.Context, ch string) string {
	name := strings.TrimPrefix(ch, "#")
	s.mu.Lock()
	id, ok := s.channels[name]
	s.mu.Unlock()
	if ok {
		return id
	}
	if !strings.HasPrefix(ch, "#") {
		return ch
	}
	params := &slack.GetConversationsParameters{Types: []string{"public_channel", "private_channel"}, Limit: 1000, ExcludeArchived: true}
	for range 10 {
		chans, cursor, err := s.api.GetConversationsContext(ctx, params)
		if err != nil {
			break
		}
		for _, c := range chans {
			if c.Name == name {
				s.rememberChannel(name, c.ID)
				return c.ID
			}
		}
		if cursor == "" {
			break
		}
		params.Cursor = cursor
	}
	return ch
}

func (s *Slack) rememberChannel(name, id string) {
	s.mu.Lock()
	s.channels[strings.TrimPrefix(name, "#")] = id
	s.mu.Unlock()
}
