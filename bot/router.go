package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/deskbot/deskbot/bot/internal/flight"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

// Router is the transport-free command layer: it parses commands, resolves
// and authorises the caller, calls the desk and renders the answer. It is
// safe for concurrent use.
type Router struct {
	desk      Desk
	log       *slog.Logger
	now       func() time.Time
	explainer Explainer
	mirror    *mirrorCache // nil: every command reads the desk
	acks      Acks
	oncall    OnCall
	timeout   time.Duration
	agentTTL  time.Duration
	link      string // ticket link template with {id}
	table     []*command
	maxRetry  int
	budget    int           // desk credits a minute for commands; 0: unchecked
	meter     *deskMeter    // what r.desk spent in the last minute
	gate      *gate         // admits the commands that call the desk (gate.go)
	messages  MessageLedger // message -> ticket claims (fromchat.go)
	marks     *store.Marks  // signs thread copies (threads.go)

	mu            sync.Mutex
	agents        map[string]cached[*sdclient.Agent] // by lower-case e-mail; v nil: not an agent
	lookups       flight.Group[*sdclient.Agent]
	names         map[int64]cached[string]
	requesters    map[int64]cached[*sdclient.TicketRequester] // v nil: unknown
	statuses      cached[[]sdclient.FieldChoice]
	statusLookups flight.Group[[]sdclient.FieldChoice]
	groups        cached[[]*sdclient.Group]
	agentsList    cached[agentPage]
	workspaces    cached[map[int64]string] // names by id
	homes         homeCache                // home.go
	requesterIDs  map[string]cached[int64] // by lower-case e-mail; 0: none
}

// NewRouter builds the command router over a desk.
func NewRouter(desk Desk, log *slog.Logger, opts ...Option) (*Router, error) {
	if desk == nil {
		return nil, errors.New("bot: NewRouter: nil desk")
	}
	if log == nil {
		return nil, errors.New("bot: NewRouter: nil logger")
	}
	cfg := routerConfig{now: time.Now, timeout: 30 * time.Second, agentTTL: 10 * time.Minute, maxRetry: 2}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.marks == nil {
		cfg.marks = store.NewMarks(nil)
	}
	r := &Router{
		desk:       desk,
		log:        log,
		now:        cfg.now,
		explainer:  cfg.explainer,
		acks:       cfg.acks,
		oncall:     cfg.oncall,
		timeout:    cfg.timeout,
		agentTTL:   cfg.agentTTL,
		link:       cfg.link(),
		maxRetry:   cfg.maxRetry,
		budget:     cfg.budget,
		messages:   cfg.messages,
		marks:      cfg.marks,
		agents:     make(map[string]cached[*sdclient.Agent]),
		names:      make(map[int64]cached[string]),
		requesters: make(map[int64]cached[*sdclient.TicketRequester]),
	}
	r.initHomes(&cfg)
	if r.messages == nil {
		r.messages = &memoryMessages{}
	}
	if cfg.mirror != nil {
		r.mirror = &mirrorCache{src: cfg.mirror, ws: map[int64]*mirrorWS{}}
	}
	r.table = commandTable()
	if err := checkTable(r.table); err != nil {
		return nil, err
	}
	r.meter = &deskMeter{}
	r.gate = newGate(r.budget, r.meter, time.Now)
	r.desk = &meteredDesk{Desk: desk, meter: r.meter, updates: cfg.updates}
	return r, nil
}

// TicketLink is the link to a ticket, or "" when no desk URL is configured.
func (r *Router) TicketLink(id int64) string {
	if r.link == "" {
		return ""
	}
	return strings.ReplaceAll(r.link, "{id}", fmt.Sprint(id))
}

// Help is the command list, generated from the command table.
func (r *Router) Help() string { return helpText(r.table) }

// call is one command being run.
type call struct {
	caller Caller
	cmd    *command
	p      ParsedCommand
	email  string
	agent  *sdclient.Agent // nil for commands open to everyone
	ticket int64
	// t is the ticket as read by permit, once per command; the command
	// renders from it rather than reading it again.
	t *sdclient.Ticket
	// source says where permit read t from for a command that reads the
	// mirror (and how fresh it is); "" when there is no mirror.
	source string
}

// Dispatch runs one command of caller and always returns an answer:
// errors, refusals and panics become a Reply with Failed set. It is the
// router's one entry point; transports turn what people do into a Command
// and render the Reply.
func (r *Router) Dispatch(ctx context.Context, caller Caller, cmd Command) Reply {
	switch {
	case cmd.Form != nil:
		return r.submitForm(ctx, caller, *cmd.Form)
	case chat.IsPageAction(cmd.Button):
		return r.actPage(ctx, caller, cmd.Button, cmd.Value)
	case cmd.Button != "":
		return r.act(ctx, caller, cmd.Button, cmd.Value)
	}
	return r.handle(ctx, caller, cmd.Slash, cmd.Text)
}

// handle runs a typed command.
func (r *Router) handle(ctx context.Context, caller Caller, slash, text string) Reply {
	p, err := ParseCommand(slash, text)
	if err != nil {
		return failed(err.Error())
	}
	cmd := lookup(r.table, p.Name)
	c := &call{caller: caller, cmd: cmd, p: p, ticket: p.ID}
	return r.run(ctx, c.cmd.name, func(ctx context.Context) (Reply, error) {
		if cmd.agentOnly {
			if err := r.authorise(ctx, c); err != nil {
				return Reply{}, err
			}
			if c.ticket != 0 {
				if err := r.permit(ctx, c); err != nil {
					return Reply{}, err
				}
			}
		}
		return cmd.run(r, ctx, c)
	}, c)
}

// run executes f under the command deadline, recovering panics and turning
// errors into answers.
func (r *Router) run(ctx context.Context, name string, f func(context.Context) (Reply, error), c *call) (resp Reply) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("command panicked", "command", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			what := "/" + name
			if b, ok := strings.CutPrefix(name, "button "); ok {
				what = "the button " + b
			}
			resp = failed(chat.PanicText(what))
		}
	}()
	resp, err := f(ctx)
	if err != nil {
		return r.explain(ctx, c, err)
	}
	return resp
}

func failed(text string) Reply { return Reply{Text: text, Failed: true} }

// refusal is an answer that is an expected "no", not a failure to log.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

func refuse(format string, a ...any) error { return &refusal{msg: fmt.Sprintf(format, a...)} }

// explain turns an error into words for the caller; unexpected errors are
// logged and reported without internals.
func (r *Router) explain(ctx context.Context, c *call, err error) Reply {
	var ref *refusal
	var use *UsageError
	what := c.cmd.verb
	if c.ticket != 0 {
		what = strings.ReplaceAll(what, "N", fmt.Sprintf("ticket %d", c.ticket))
	}
	switch {
	case errors.As(err, &ref):
		return failed(ref.msg)
	case errors.As(err, &use):
		return failed(use.Error())
	}
	if msg, ok := r.deskTrouble(err, c.ticket); ok {
		r.log.Warn("command failed at the desk", "command", c.cmd.name, "user", c.caller.UserID, "err", err)
		return failed(fmt.Sprintf("could not %s: %s", what, msg))
	}
	switch {
	case errors.Is(err, sdclient.ErrNotFound) && c.ticket != 0:
		return failed(fmt.Sprintf("ticket %d not found", c.ticket))
	case errors.Is(err, sdclient.ErrNotFound):
		return failed(fmt.Sprintf("could not %s: not found", what))
	case errors.Is(err, sdclient.ErrForbidden), errors.Is(err, sdclient.ErrUnauthorized):
		return failed(fmt.Sprintf("the desk does not let you %s", what))
	case errors.Is(err, sdclient.ErrValidation), errors.Is(err, sdclient.ErrInvalidInput):
		return failed(fmt.Sprintf("the desk refused to %s: %v", what, err))
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		r.log.Warn("command timed out", "command", c.cmd.name, "err", err)
		return failed(fmt.Sprintf("the desk did not answer in time (%s); could not %s, try again", r.timeout, what))
	}
	r.log.Error("command failed", "command", c.cmd.name, "user", c.caller.UserID, "err", err)
	return failed(fmt.Sprintf("could not %s: something went wrong (logged)", what))
}

// authorise resolves the caller to an agent or refuses.
func (r *Router) authorise(ctx context.Context, c *call) error {
	email, err := r.callerEmail(ctx, c.caller)
	if err != nil {
		return err
	}
	c.email = email
	a, err := r.agentByEmail(ctx, email)
	if err != nil {
		return err
	}
	if a == nil {
		return refuse("only desk agents can use %s; %s is not an agent of the desk. You can open a ticket with /ticket new subject", c.cmd.slash(), email)
	}
	c.agent = a
	return nil
}

func (r *Router) callerEmail(ctx context.Context, req Caller) (string, error) {
	if req.Users == nil || req.UserID == "" {
		return "", refuse("I do not know who you are (no chat user)")
	}
	email, err := req.Users.Email(ctx, req.UserID)
	if err != nil {
		return "", fmt.Errorf("look up e-mail of %s: %w", req.UserID, err)
	}
	if email == "" {
		return "", refuse("your chat profile shows no e-mail address, so the desk cannot tell who you are")
	}
	return email, nil
}

// agentByEmail returns the agent with that e-mail, nil when the person is
// not an (active) agent; answers are cached.
func (r *Router) agentByEmail(ctx context.Context, email string) (*sdclient.Agent, error) {
	key := strings.ToLower(email)
	now := r.now()
	r.mu.Lock()
	e, ok := r.agents[key]
	r.mu.Unlock()
	if ok {
		ttl := r.agentTTL
		if e.v == nil {
			ttl /= 10
		}
		if now.Sub(e.at) < ttl {
			return e.v, nil
		}
	}
	return r.lookups.Do(key, func() (*sdclient.Agent, error) {
		a, err := retried(ctx, r, func(ctx context.Context) (*sdclient.Agent, error) { return r.desk.AgentByEmail(ctx, email) })
		switch {
		case errors.Is(err, sdclient.ErrNotFound):
			a = nil
		case err != nil:
			return nil, fmt.Errorf("look up agent %s: %w", email, err)
		}
		if a != nil && !a.Active {
			a = nil
		}
		r.mu.Lock()
		r.agents[key] = cached[*sdclient.Agent]{v: a, at: now, ok: true}
		r.mu.Unlock()
		return a, nil
	})
}

// retrying runs f, and when safe retries it after a 429 as long as the
// wait fits in the deadline.
func (r *Router) retrying(ctx context.Context, safe bool, f func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		if err == nil || !safe || attempt >= r.maxRetry || !errors.Is(err, sdclient.ErrRateLimited) {
			return err
		}
		wait := deskRetryAfter(err)
		if wait <= 0 {
			wait = time.Second
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// retried is call through retrying (safe: a read or an idempotent write),
// with the answer of its last try.
func retried[T any](ctx context.Context, r *Router, call func(context.Context) (T, error)) (T, error) {
	var v T
	err := r.retrying(ctx, true, func(ctx context.Context) error {
		var err error
		v, err = call(ctx)
		return err
	})
	return v, err
}

// deskRetryAfter is the wait a rate-limited desk asked for; 0 when it did not
// say.
func deskRetryAfter(err error) time.Duration {
	var rl *sdclient.RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter
	}
	return 0
}
