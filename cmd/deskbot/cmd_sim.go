package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// maxSimTickets bounds --tickets: the desk is generated in memory before it
// serves, and a typo such as 100000000 would take minutes and gigabytes
// while ignoring Ctrl-C.
const maxSimTickets = 100_000

// cmdSim serves the desk simulator alone, seeded with a realistic desk, so
// that rules can be tried against it with DESKBOT_DESK_URL.
func cmdSim(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "sim", "sim [--addr ADDR] [--tickets N] [--seed N] [--rate N] [--search-page-cap N]")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	tickets := fs.Int("tickets", 200, "number of generated tickets")
	seed := fs.Int64("seed", 1, "seed of the generated desk (same seed, same desk)")
	// The same limit as the embedded simulator's, the smallest plan's: rules
	// tried here spend what they would on a real desk.
	rate := fs.Int("rate", embeddedRateLimit, "requests per minute before answering 429, account-wide like a real desk's (0: unlimited)")
	// Freshdesk refuses search pages past 10; a desk that does shows how
	// deskbot's full sync still mirrors every open ticket.
	pageCap := fs.Int("search-page-cap", 0, "refuse /tickets/filter pages past this one with 400, as Freshdesk does past 10 (0: no cap)")
	if err := parseFlags(fs, args); err != nil {
		return usageErr(fs, "sim", err)
	}
	if fs.NArg() > 0 {
		return usageErr(fs, "sim", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *tickets < 0 || *tickets > maxSimTickets {
		return usageErr(fs, "sim", fmt.Errorf("--tickets must be between 0 and %d, got %d", maxSimTickets, *tickets))
	}
	if *rate < 0 {
		return usageErr(fs, "sim", fmt.Errorf("--rate must not be negative (0: unlimited), got %d", *rate))
	}
	if *pageCap < 0 {
		return usageErr(fs, "sim", fmt.Errorf("--search-page-cap must not be negative (0: no cap), got %d", *pageCap))
	}
	desk := sdsim.New(sdsim.WithGenerated(*seed, *tickets), sdsim.WithRateLimit(*rate), sdsim.WithFilterPageCap(*pageCap))
	defer desk.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("sim: listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: desk.Handler(), ReadHeaderTimeout: 5 * time.Second}
	limit := fmt.Sprintf("%d requests a minute", *rate)
	if *rate == 0 {
		limit = "no rate limit"
	}
	if *pageCap > 0 {
		limit += fmt.Sprintf(", search pages past %d refused", *pageCap)
	}
	fmt.Fprintf(e.stdout, "desk simulator on http://%s with %d tickets, %s\n", ln.Addr(), *tickets, limit)
	fmt.Fprintf(e.stdout, "try: DESKBOT_DESK_URL=http://%s DESKBOT_DESK_API_KEY=%s deskbot\n", ln.Addr(), sdsim.DefaultAPIKey)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("sim: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
