package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/deskbot/deskbot/bot/slackchat"
)

// config is deskbot's environment contract (DESIGN.md section 3): names,
// defaults and meanings must stay exactly as documented there.
type config struct {
	DeskURL            string     `env:"DESKBOT_DESK_URL"`
	DeskAPIKey         secret     `env:"DESKBOT_DESK_API_KEY"`
	RatePerMin         int        `env:"DESKBOT_DESK_RATE_PER_MIN, default=60"`
	ListRatePerMin     int        `env:"DESKBOT_DESK_LIST_RATE_PER_MIN, default=0"`
	WorkspaceIDs       idList     `env:"DESKBOT_WORKSPACE_IDS"`
	SlackBotToken      secret     `env:"SLACK_BOT_TOKEN"`
	SlackAppToken      secret     `env:"SLACK_APP_TOKEN"`
	SlackAPIURL        string     `env:"DESKBOT_SLACK_API_URL, default=https://slack.com/api/"`
	SlackAllowedTeams  []string   `env:"DESKBOT_SLACK_ALLOWED_TEAMS"`
	Rules              string     `env:"DESKBOT_RULES"`
	State              string     `env:"DESKBOT_STATE"` // see defaultState
	HTTPAddr           string     `env:"DESKBOT_HTTP_ADDR, default=127.0.0.1:9717"`
	DryRun             bool       `env:"DESKBOT_DRY_RUN, default=false"`
	MaxFiringsPerCycle int        `env:"DESKBOT_MAX_FIRINGS_PER_CYCLE, default=50"`
	LogLevel           slog.Level `env:"DESKBOT_LOG_LEVEL, default=info"`
	LogFormat          string     `env:"DESKBOT_LOG_FORMAT, default=text"`
	TicketReaction     string     `env:"DESKBOT_TICKET_REACTION, default=ticket"`
	UIToken            secret     `env:"DESKBOT_UI_TOKEN"`
	// History is how long the ticket history (rules backtest) is kept; 0
	// keeps none.
	History time.Duration `env:"DESKBOT_HISTORY, default=720h"`

	// stateInMemory: DESKBOT_STATE was unset with the embedded simulator.
	stateInMemory bool
}

// secret holds a credential. Every way of printing it prints a placeholder,
// so a config dump, a %v in an error or a slog attribute cannot leak it.
type secret string

const redacted = "[redacted]"

func (s secret) String() string               { return redacted }
func (s secret) GoString() string             { return redacted }
func (s secret) LogValue() slog.Value         { return slog.StringValue(redacted) }
func (s secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// reveal returns the credential itself, for the one place that sends it.
func (s secret) reveal() string { return string(s) }

// idList is a comma list of positive ids (DESKBOT_WORKSPACE_IDS).
type idList []int64

// EnvDecode reads a comma list of distinct positive ids; blanks around ids
// and empty items are ignored, but a list must name at least one id, and an
// id listed twice (which would poll its workspace twice) is refused.
func (l *idList) EnvDecode(v string) error {
	*l = nil
	if v == "" { // unset: the account's default workspace
		return nil
	}
	seen := map[int64]bool{}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a positive workspace id; want a comma list such as 2,7", part)
		}
		if seen[n] {
			return fmt.Errorf("workspace %d is listed twice in %q", n, v)
		}
		seen[n] = true
		*l = append(*l, n)
	}
	if len(*l) == 0 {
		return fmt.Errorf("no workspace id in %q; want a comma list such as 2,7, or leave it unset for the default workspace", v)
	}
	return nil
}

// want says what a variable that go-envconfig parses (rather than our own
// decoders) expects, for errors users can act on instead of strconv's.
func want(name string) (string, bool) {
	switch name {
	case "DESKBOT_DESK_RATE_PER_MIN":
		return "a whole number of requests per minute such as 60", true
	case "DESKBOT_DESK_LIST_RATE_PER_MIN":
		return "a whole number of ticket lists per minute such as 24, or 0 for two fifths of DESKBOT_DESK_RATE_PER_MIN", true
	case "DESKBOT_DRY_RUN":
		return "true or false", true
	case "DESKBOT_MAX_FIRINGS_PER_CYCLE":
		return "a whole number of firings per poll such as 50, or 0 for no bound across rules", true
	case "DESKBOT_LOG_LEVEL":
		return "debug, info, warn or error", true
	case "DESKBOT_HISTORY":
		return "a duration such as 720h (30 days) or 168h, or 0 to keep no history", true
	}
	return "", false
}

// loadConfig reads the environment through getenv. An empty variable counts
// as unset, so `X=` never passes for a required value. Every error is one
// line that names the variable.
func loadConfig(ctx context.Context, getenv func(string) string) (*config, error) {
	var cfg config
	lookup := envconfig.LookuperFunc(func(key string) (string, bool) {
		v := getenv(key)
		return v, v != ""
	})
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &cfg, Lookuper: lookup}); err != nil {
		name, err := renameFieldError(err)
		if w, ok := want(name); ok {
			return nil, fmt.Errorf("%s: want %s, got %q", name, w, getenv(name))
		}
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.State == "" {
		cfg.State, cfg.stateInMemory = defaultState(cfg.DeskURL)
	}
	return &cfg, nil
}

// defaultState is the state store when DESKBOT_STATE is unset: deskbot.db
// in the working directory for a real desk; in memory for the embedded
// simulator, whose desk is generated afresh on every start, so that every
// demo run behaves like the first instead of finding a ledger (and on-call
// pages) about tickets of a desk that no longer exists.
func defaultState(deskURL string) (dsn string, inMemory bool) {
	if deskURL == "" {
		return ":memory:", true
	}
	return "deskbot.db", false
}

// validate checks what go-envconfig cannot: the variables that go
// together, the ranges and the URL forms. The first problem found is the
// error, naming its variable.
func (c *config) validate() error {
	for _, check := range []func() error{c.validateDesk, c.validateRates, c.validateSlack, c.validateReaction, c.validateLog} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateDesk checks DESKBOT_DESK_URL and its API key.
func (c *config) validateDesk() error {
	if c.DeskURL == "" {
		if c.DeskAPIKey != "" {
			return errors.New("DESKBOT_DESK_URL: required when DESKBOT_DESK_API_KEY is set")
		}
		return nil
	}
	u, err := url.Parse(c.DeskURL)
	switch {
	case err != nil || !isHTTPURL(u):
		return errors.New("DESKBOT_DESK_URL: must be an http(s) URL such as https://acme.freshservice.com")
	case u.User != nil:
		return errors.New("DESKBOT_DESK_URL: must not carry credentials; set DESKBOT_DESK_API_KEY")
	case c.DeskAPIKey == "":
		return errors.New("DESKBOT_DESK_API_KEY: required when DESKBOT_DESK_URL is set")
	}
	return nil
}

// validateRates checks the request budgets and the firings bound.
func (c *config) validateRates() error {
	switch {
	case c.RatePerMin < 2:
		return fmt.Errorf("DESKBOT_DESK_RATE_PER_MIN: must be at least 2, got %d", c.RatePerMin)
	case c.ListRatePerMin < 0 || c.ListRatePerMin == 1:
		return fmt.Errorf("DESKBOT_DESK_LIST_RATE_PER_MIN: must be 0 (two fifths of DESKBOT_DESK_RATE_PER_MIN) or at least 2, got %d", c.ListRatePerMin)
	case c.ListRatePerMin > c.RatePerMin:
		return fmt.Errorf("DESKBOT_DESK_LIST_RATE_PER_MIN: %d is more than DESKBOT_DESK_RATE_PER_MIN (%d), which it is part of", c.ListRatePerMin, c.RatePerMin)
	case c.MaxFiringsPerCycle < 0:
		return fmt.Errorf("DESKBOT_MAX_FIRINGS_PER_CYCLE: must be 0 (no bound across rules) or more, got %d", c.MaxFiringsPerCycle)
	case c.History < 0:
		return fmt.Errorf("DESKBOT_HISTORY: must be 0 (keep no history) or more, got %v", c.History)
	}
	return nil
}

// validateSlack checks the Slack tokens, which go together, and the Web
// API URL, which it ends with a slash.
func (c *config) validateSlack() error {
	switch {
	case c.SlackBotToken == "" && c.SlackAppToken != "":
		return errors.New("SLACK_BOT_TOKEN: required when SLACK_APP_TOKEN is set")
	case c.SlackBotToken != "" && c.SlackAppToken == "":
		return errors.New("SLACK_APP_TOKEN: required when SLACK_BOT_TOKEN is set")
	case c.SlackBotToken != "" && !strings.HasPrefix(c.SlackBotToken.reveal(), "xoxb-"):
		return errors.New("SLACK_BOT_TOKEN: must be a bot token starting with xoxb-")
	case c.SlackBotToken != "" && !strings.HasPrefix(c.SlackAppToken.reveal(), "xapp-"):
		return errors.New("SLACK_APP_TOKEN: must be an app-level token starting with xapp-")
	}
	if u, err := url.Parse(c.SlackAPIURL); err != nil || !isHTTPURL(u) {
		return errors.New("DESKBOT_SLACK_API_URL: must be an http(s) URL")
	}
	if !strings.HasSuffix(c.SlackAPIURL, "/") {
		// slack-go joins method names by concatenation.
		c.SlackAPIURL += "/"
	}
	teams := c.SlackAllowedTeams[:0]
	for _, id := range c.SlackAllowedTeams {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		if !slackTeamID.MatchString(id) {
			return fmt.Errorf("DESKBOT_SLACK_ALLOWED_TEAMS: want Slack team ids such as T0123ABCD, got %q", id)
		}
		teams = append(teams, id)
	}
	c.SlackAllowedTeams = teams
	return nil
}

// slackTeamID is a Slack team (workspace) or Grid organisation id.
var slackTeamID = regexp.MustCompile(`^[TE][A-Z0-9]{2,}$`)

// validateReaction checks DESKBOT_TICKET_REACTION: an emoji name, with or
// without colons, or off.
func (c *config) validateReaction() error {
	c.TicketReaction = strings.Trim(strings.TrimSpace(c.TicketReaction), ":")
	if c.TicketReaction != "off" && !slackchat.ValidReaction(c.TicketReaction) {
		return fmt.Errorf("DESKBOT_TICKET_REACTION: want an emoji name such as ticket or :ticket:, or off, got %q", c.TicketReaction)
	}
	return nil
}

// validateLog checks DESKBOT_LOG_FORMAT (go-envconfig parses the level).
func (c *config) validateLog() error {
	switch c.LogFormat {
	case "text", "json":
		return nil
	}
	return fmt.Errorf("DESKBOT_LOG_FORMAT: must be text or json, got %q", c.LogFormat)
}

// isHTTPURL reports whether u is an absolute http or https URL.
func isHTTPURL(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// slackEnabled reports whether the Slack transport is configured.
func (c *config) slackEnabled() bool { return c.SlackBotToken != "" }

// renameFieldError turns go-envconfig's "FieldName: problem" into
// "ENV_NAME: problem", since users know the variable, not our field, and
// returns the variable's name ("" when the error names no field).
func renameFieldError(err error) (string, error) {
	msg := err.Error()
	t := reflect.TypeOf(config{})
	for i := range t.NumField() {
		f := t.Field(i)
		if rest, ok := strings.CutPrefix(msg, f.Name+": "); ok {
			name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			return name, fmt.Errorf("%s: %s", name, rest)
		}
	}
	return "", err
}

// listRate is the ticket list budget: DESKBOT_DESK_LIST_RATE_PER_MIN, or
// by default two fifths of the overall budget, the share the desk's
// smallest plan allows for listing (40 of its 100 a minute).
func (c *config) listRate() int {
	if c.ListRatePerMin > 0 {
		return c.ListRatePerMin
	}
	return max(2, c.RatePerMin*2/5)
}

// ticketReaction is the emoji of DESKBOT_TICKET_REACTION for the Slack
// transport; "" when it is off.
func (c *config) ticketReaction() string {
	if c.TicketReaction == "off" {
		return ""
	}
	return c.TicketReaction
}
