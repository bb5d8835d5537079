package slackchat

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
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
