package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// The desk deskbot talks to: DESKBOT_DESK_URL, or the embedded simulator.

// Embedded-default settings: the simulated desk a new user meets.
const (
	embeddedSeed    = 1
	embeddedTickets = 200
)

// desk is the service desk deskbot talks to.
type desk struct {
	url         string           // the desk's base URL: DESKBOT_DESK_URL or the embedded simulator's
	client      *sdclient.Client // the scheduler polls with it
	interactive *sdclient.Client // people's requests (chat, a reload, /readyz): its twin that keeps the reserve
	reach       *deskReach       // whether the desk has answered the start-up check
	shared      *deskShared      // the reads the parts share (the form's fields, the key's agent)
	stop        func()           // ends the embedded simulator
}

// deskHTTPClient is the desk client's HTTP client: a timeout per request
// on a transport of its own.
func deskHTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// connectDesk starts the embedded simulator when DESKBOT_DESK_URL is unset,
// builds the desk client with the configured budget and opts, and asks the
// desk who owns the key (the start-up check that turns a wrong key into one
// clear line). A desk that does not answer is no error: d.reach says so
// (and can retry: deskReach), and a caller that needs the desk now returns
// d.reach.failed(). started, when not nil, hears the desk's URL before the
// first request.
func connectDesk(ctx context.Context, cfg *config, logger *slog.Logger, started func(url string), opts ...sdclient.Option) (d *desk, err error) {
	url, apiKey, stop, err := deskEndpoint(cfg, logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if started != nil {
		started(url)
	}
	opts = append([]sdclient.Option{sdclient.WithRatePerMinute(cfg.RatePerMin),
		sdclient.WithListRatePerMinute(cfg.listRate()), sdclient.WithLogger(logger)}, opts...)
	client, err := sdclient.New(url, apiKey, opts...)
	if err != nil {
		return nil, fmt.Errorf("DESKBOT_DESK_URL: %w", err)
	}
	d = &desk{url: url, client: client, interactive: client.Interactive(), stop: stop}
	d.shared = newDeskShared(d.interactive, time.Now)
	me, err := checkDesk(ctx, d.interactive)
	var refused deskRefused
	switch {
	case err == nil:
		d.shared.me.set(me) // the chat's "who am I" needs no second read
		d.reach = reachedDesk()
		logger.Info("connected to the desk", "url", client.BaseURL(), "agent", me.Email)
	case errors.As(err, &refused), ctx.Err() != nil:
		return nil, err
	default:
		d.reach = unreachedDesk(func(ctx context.Context) (*sdclient.Agent, error) {
			me, err := checkDesk(ctx, d.interactive)
			if err == nil {
				d.shared.me.set(me) // the status pages name the key's agent
			}
			return me, err
		}, err, time.Now, logger)
	}
	return d, nil
}

// announceDesk says, at start-up, that the desk is the embedded simulator
// and what becomes of the state with it.
func announceDesk(cfg *config, logger *slog.Logger) func(url string) {
	return func(url string) {
		if cfg.DeskURL != "" {
			return
		}
		logger.Info("no DESKBOT_DESK_URL: running the embedded desk simulator", "url", url, "tickets", embeddedTickets)
		if cfg.stateInMemory {
			logger.Info("state kept in memory with the embedded simulator: every run starts like the first (set DESKBOT_STATE to keep it)")
		} else {
			logger.Warn("DESKBOT_STATE persists, but the embedded simulator's desk is generated afresh on every start: "+
				"the ledger and on-call pages there refer to an earlier desk's tickets", "state", store.Redacted(cfg.State))
		}
	}
}

// checkDesk asks the desk who owns the API key: the start-up check that turns
// a wrong key into one clear line instead of a stack of retries. A refusal
// of the key or the URL is a deskRefused; anything else may pass.
func checkDesk(ctx context.Context, c *sdclient.Client) (*sdclient.Agent, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	me, _, err := c.Interactive().Agents.Me(ctx)
	switch {
	case err == nil:
		return me, nil
	case errors.Is(err, sdclient.ErrUnauthorized):
		return nil, deskRefused{errors.New("the desk rejected the API key (DESKBOT_DESK_API_KEY)")}
	case errors.Is(err, sdclient.ErrForbidden):
		return nil, deskRefused{errors.New("the desk does not let this API key read its own agent (GET /agents/me); use an agent's key")}
	case errors.Is(err, sdclient.ErrNotFound):
		return nil, deskRefused{fmt.Errorf("%s answers 404 to GET /agents/me: is DESKBOT_DESK_URL the desk's base URL, such as https://acme.freshservice.com?", c.BaseURL())}
	default:
		return nil, fmt.Errorf("cannot reach the desk at %s: %w", c.BaseURL(), err)
	}
}

// deskEndpoint is the desk to talk to: DESKBOT_DESK_URL with its key, or,
// when it is unset, the embedded simulator; stop ends the simulator.
func deskEndpoint(cfg *config, logger *slog.Logger) (url, apiKey string, stop func(), err error) {
	if cfg.DeskURL != "" {
		return cfg.DeskURL, cfg.DeskAPIKey.reveal(), func() {}, nil
	}
	// The simulator limits requests as a real desk does (the smallest
	// plan's 100 a minute, or deskbot's own budget when that is larger), so
	// that its X-Ratelimit-* headers, and deskbot_desk_rate_limit_remaining,
	// are real.
	url, stop, err = startEmbeddedDesk(logger, sdsim.WithRateLimit(max(embeddedRateLimit, cfg.RatePerMin)))
	if err != nil {
		return "", "", nil, err
	}
	return url, sdsim.DefaultAPIKey, stop, nil
}

// embeddedRateLimit is the embedded simulator's account-wide rate limit,
// in requests a minute: the desk's smallest plan.
const embeddedRateLimit = 100

// startEmbeddedDesk serves a seeded simulator on a loopback port.
func startEmbeddedDesk(logger *slog.Logger, opts ...sdsim.Option) (string, func(), error) {
	desk := sdsim.New(append([]sdsim.Option{sdsim.WithGenerated(embeddedSeed, embeddedTickets)}, opts...)...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		desk.Close()
		return "", nil, fmt.Errorf("embedded desk: %w", err)
	}
	srv := &http.Server{
		Handler:           desk.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() {
		_ = srv.Close()
		desk.Close()
	}, nil
}
