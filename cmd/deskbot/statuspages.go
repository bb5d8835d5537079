package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/statuspage"
	"github.com/deskbot/deskbot/store"
)

// newStatusPages builds the status pages on the ops server: open on a
// loopback address, behind DESKBOT_UI_TOKEN elsewhere, off without one.
// Their /readyz findings never ask the desk (the desk's line is what the
// reachability probe last saw), so that a page costs no desk request.
func newStatusPages(cfg *config, addr string, d *desk, st *store.Store, live *liveRules, parts *chatParts, reg *prometheus.Registry, logger *slog.Logger) (*statuspage.Handler, error) {
	checks := readyChecks(d, st, live, parts)
	for i := range checks {
		if checks[i].name == "desk" {
			checks[i].check = func(context.Context) error { return d.reach.status() }
		}
	}
	host, _ := os.Hostname()
	opts := []statuspage.Option{
		statuspage.WithLoopback(statuspage.IsLoopback(addr)),
		statuspage.WithToken(cfg.UIToken.reveal()),
		statuspage.WithGatherer(reg),
		statuspage.WithRequestBudget(cfg.RatePerMin, d.client.BackgroundBudget()),
		statuspage.WithRules(live.set.Load),
		statuspage.WithLogger(logger),
		statuspage.WithFindings(func(ctx context.Context) []statuspage.Finding {
			out := make([]statuspage.Finding, 0, len(checks))
			for _, c := range checks {
				var dg degraded
				status := "ok"
				if err := c.check(ctx); errors.As(err, &dg) {
					status = "degraded: " + dg.Error()
				} else if err != nil {
					status = err.Error()
				}
				out = append(out, statuspage.Finding{Name: c.name, Status: status})
			}
			return out
		}),
	}
	if d.shared != nil {
		opts = append(opts, statuspage.WithAgent(func() (string, string, bool) {
			me, ok := d.shared.me.known() // the start-up check's, never a new read
			if !ok || me == nil {
				return "", "", false
			}
			return me.Name(), me.Email, true
		}))
	}
	if parts.mirror != nil {
		// A rule's page evaluates the rule over the mirror when asked.
		opts = append(opts, statuspage.WithMirror(parts.mirror))
	}
	if parts.commands != nil {
		opts = append(opts, statuspage.WithCommands(parts.commands))
	}
	if parts.router != nil {
		// On-call members by name, as /oncall in chat says them; looked
		// up in the background (the router caches), never by a page.
		dir, _ := parts.chat.(chat.Directory)
		opts = append(opts, statuspage.WithPersonNames(func(ctx context.Context, member string) string {
			name := parts.router.MemberName(ctx, dir, member)
			if strings.HasPrefix(name, "Slack user ") {
				return "" // no name known: the page shows the id
			}
			return name
		}))
	}
	if base := strings.TrimSuffix(d.url, "/"); base != "" {
		opts = append(opts, statuspage.WithTicketLink(func(id int64) string { return fmt.Sprintf("%s/a/tickets/%d", base, id) }))
	}
	replica := fmt.Sprintf("%s (pid %d)", host, os.Getpid())
	if parts.lead != nil {
		opts = append(opts, statuspage.WithLeader(replica, parts.lead.Leader))
	} else {
		opts = append(opts, statuspage.WithLeader(replica, nil))
	}
	var sched statuspage.Scheduler
	if parts.sched != nil {
		sched = parts.sched
	}
	return statuspage.New(sched, st, opts...)
}

// pagesAccess says in the start-up line who may open the status pages
// (never the token itself).
func pagesAccess(addr string, token bool) string {
	switch {
	case statuspage.IsLoopback(addr):
		return "open on loopback: http://" + addr + "/"
	case token:
		return "need DESKBOT_UI_TOKEN"
	}
	return "off: not a loopback address and DESKBOT_UI_TOKEN is unset"
}
