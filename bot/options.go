package bot

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deskbot/deskbot/store"
)

// Option configures a Router. Options only record a value; NewRouter
// checks them and returns the error.
type Option func(*routerConfig)

// routerConfig is what the options set; NewRouter checks it.
type routerConfig struct {
	now        func() time.Time
	explainer  Explainer
	acks       Acks
	oncall     OnCall
	mirror     Mirror
	updates    MirrorUpdater
	timeout    time.Duration
	agentTTL   time.Duration
	deskURL    string
	ticketLink *string // nil: not set
	maxRetry   int
	budget     int
	// homeInterval is WithHomeInterval's, nil: DefaultHomeInterval.
	homeInterval *time.Duration
	messages     MessageLedger
	marks        *store.Marks
}

// WithClock sets the clock used for caches and retries (tests).
func WithClock(now func() time.Time) Option {
	return func(c *routerConfig) { c.now = now }
}

// WithExplainer wires /ticket why to the rules engine.
func WithExplainer(e Explainer) Option {
	return func(c *routerConfig) { c.explainer = e }
}

// WithAcks records alert acknowledgements (on-call escalation stops).
func WithAcks(a Acks) Option {
	return func(c *routerConfig) { c.acks = a }
}

// WithCommandTimeout bounds each command's work (default 30s).
func WithCommandTimeout(d time.Duration) Option {
	return func(c *routerConfig) { c.timeout = d }
}

// WithAgentCacheTTL sets how long an e-mail -> agent lookup is trusted
// (default 10m; a "not an agent" answer is kept a tenth as long).
func WithAgentCacheTTL(d time.Duration) Option {
	return func(c *routerConfig) { c.agentTTL = d }
}

// WithDeskURL derives ticket links from the desk's base URL:
// {base}/a/tickets/{id}. An empty base sets no link.
func WithDeskURL(base string) Option {
	return func(c *routerConfig) { c.deskURL = base }
}

// WithTicketLink sets the ticket link template; {id} is replaced by the
// ticket id. It wins over WithDeskURL.
func WithTicketLink(tmpl string) Option {
	return func(c *routerConfig) { c.ticketLink = &tmpl }
}

// WithBusyRetries sets how often a safe (read or idempotent) desk call is
// retried after a 429 within the command's deadline (default 2).
func WithBusyRetries(n int) Option {
	return func(c *routerConfig) { c.maxRetry = n }
}

// check refuses values no option may set.
func (c *routerConfig) check() error {
	switch {
	case c.now == nil:
		return errors.New("bot: WithClock: nil clock")
	case c.timeout <= 0:
		return fmt.Errorf("bot: WithCommandTimeout: %s is not positive", c.timeout)
	case c.agentTTL < 0:
		return fmt.Errorf("bot: WithAgentCacheTTL: %s is negative", c.agentTTL)
	case c.maxRetry < 0:
		return fmt.Errorf("bot: WithBusyRetries: %d is negative", c.maxRetry)
	case c.homeInterval != nil && *c.homeInterval < 0:
		return fmt.Errorf("bot: WithHomeInterval: %s is negative", *c.homeInterval)
	case c.budget < 0:
		return fmt.Errorf("bot: WithDeskBudget: %d is negative", c.budget)
	case c.deskURL != "" && !strings.HasPrefix(c.deskURL, "http://") && !strings.HasPrefix(c.deskURL, "https://"):
		return fmt.Errorf("bot: WithDeskURL: %q is not an http(s) URL", c.deskURL)
	case c.ticketLink != nil && !strings.Contains(*c.ticketLink, "{id}"):
		return fmt.Errorf("bot: WithTicketLink: template %q has no {id}", *c.ticketLink)
	}
	return nil
}

// link is the ticket link template the options set; "" for none.
func (c *routerConfig) link() string {
	switch {
	case c.ticketLink != nil:
		return *c.ticketLink
	case c.deskURL != "":
		return strings.TrimRight(c.deskURL, "/") + "/a/tickets/{id}"
	}
	return ""
}
