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
		s.unreadableFrame(evt)
	case socketmode.EventTypeSlashCommand:
		s.slashEvent(ctx, sm, evt)
	case socketmode.EventTypeInteractive:
		s.interactiveEvent(ctx, sm, evt)
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

// unreadableFrame logs a frame that is not JSON at all: there is no
// envelope id to ack.
func (s *Slack) unreadableFrame(evt socketmode.Event) {
	err := errors.New("unknown")
	if e, ok := evt.Data.(*slack.IncomingEventError); ok && e != nil {
		err = e.ErrorObj
	}
	s.log.Warn("dropped an unreadable socket-mode frame (no envelope id to ack)", "err", err)
}

// slashEvent acks a slash command and spawns its job.
func (s *Slack) slashEvent(ctx context.Context, sm acker, evt socketmode.Event) {
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
}

// interactiveEvent acks an interaction (a form's ack may carry its
// errors) and spawns its job.
func (s *Slack) interactiveEvent(ctx context.Context, sm acker, evt socketmode.Event) {
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
		s.viewSubmission(ctx, sm, evt, cb)
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
}

// viewSubmission handles a submitted form: the new-ticket form or the
// ticket-from-message form.
func (s *Slack) viewSubmission(ctx context.Context, sm acker, evt socketmode.Event, cb slack.InteractionCallback) {
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
