package statuspage

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/store"
)

type overviewData struct {
	base
	Replica, Leads string
	Leader         string // the replica that leads, as the store records it
	Agent          string // the API key's agent: "Name <e-mail>"
	Chat           chatStats
	Findings       []Finding
	Degraded       []Finding
	Desk           deskStats
	Requests       template.HTML // requests per minute over the last hour
	RequestsHour   int
	PeopleHour     int // of RequestsHour, people's
	Mirrors        []mirrorRow
	Rules          int
	FiredHour      int
	FiredDay       int
	Chart          template.HTML
	Backtest       *store.Backtest // the last backtest kept; nil: none
}

// chatStats is the chat commands answered in the last hour.
type chatStats struct {
	Known    bool // the chat's router reports its answers here
	Answered int
	P99      string // "" without commands
}

type mirrorRow struct {
	Workspace string
	Tickets   int
	Behind    string
	State     string
}

// mirrorRowOf is one workspace's mirror as the overview shows it at now.
func mirrorRowOf(m feed.Status, now time.Time) mirrorRow {
	row := mirrorRow{Workspace: m.Workspace, Tickets: m.Tickets, Behind: "not read yet"}
	if !m.Cursor.IsZero() {
		row.Behind = rules.ShortDuration(now.Sub(m.Cursor).Round(time.Second)) + " behind the desk's clock"
	}
	switch {
	case m.Syncing && m.Total >= 0:
		row.State = fmt.Sprintf("full sync under way: %d of %d tickets", m.Seen, m.Total)
	case m.Syncing:
		row.State = fmt.Sprintf("full sync under way: %d tickets so far", m.Seen)
	case m.Complete:
		row.State = "complete (last full sync " + stamp(m.FullSyncAt) + ")"
	default:
		row.State = "incomplete: the first full sync has not finished"
	}
	return row
}

func (h *Handler) overview(r *http.Request) (any, error) {
	ctx := r.Context()
	v, noRule, err := h.view(ctx)
	if err != nil {
		return nil, err
	}
	d := overviewData{base: h.base("/", v, noRule), Replica: cmp.Or(h.cfg.replica, "this process"), Leads: "yes (single process)"}
	if h.cfg.leader != nil && !h.cfg.leader() {
		d.Leads = "no: another replica runs the rules; this one answers chat"
	}
	if h.cfg.findings != nil {
		d.Findings = h.cfg.findings(ctx)
		for _, f := range d.Findings {
			if f.Status != "ok" {
				d.Degraded = append(d.Degraded, f)
			}
		}
	}
	if d.Leader, err = h.leaderText(ctx); err != nil {
		return nil, err
	}
	d.Agent, d.Chat = h.agentText(), h.chatStats()
	d.Desk = h.deskStats()
	d.Requests, d.RequestsHour, d.PeopleHour = h.requestChart()
	for _, m := range v.Ready.Mirror {
		d.Mirrors = append(d.Mirrors, mirrorRowOf(m, v.At))
	}
	if v.Set != nil {
		d.Rules = len(v.Set.Rules())
	}
	counts, err := h.ledger.FiredPerHour(ctx, v.At.Add(-hours*time.Hour), "")
	if err != nil {
		return nil, err
	}
	var day perHour
	for _, c := range counts {
		day.add(c)
	}
	for _, n := range day {
		d.FiredDay += n
	}
	d.FiredHour = day[hours-1]
	d.Chart = hourChart(day, true)
	bt, ok, err := h.ledger.LastBacktest(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		bt.Report = nil // the link needs the figures only
		d.Backtest = &bt
	}
	return d, nil
}

// leaderText names the replica that leads, from the store's leadership.
func (h *Handler) leaderText(ctx context.Context) (string, error) {
	li, err := h.ledger.Leader(ctx)
	switch {
	case err != nil:
		return "", err
	case li.Epoch == 0:
		return "none yet: no replica has run the rules on this state", nil
	}
	return fmt.Sprintf("%s (epoch %d, since %s)", cmp.Or(li.Holder, "a replica that did not say its name"), li.Epoch, stamp(li.Since)), nil
}

// agentText is the API key's agent, "Name <e-mail>", or "" when unknown.
func (h *Handler) agentText() string {
	if h.cfg.agent == nil {
		return ""
	}
	name, email, ok := h.cfg.agent()
	switch {
	case !ok:
		return ""
	case name != "":
		return name + " <" + email + ">"
	}
	return email
}

// chatStats are the chat commands answered in the last hour.
func (h *Handler) chatStats() chatStats {
	if h.cfg.commands == nil {
		return chatStats{}
	}
	n, p99 := h.cfg.commands.lastHour(h.cfg.now())
	c := chatStats{Known: true, Answered: n}
	if n > 0 {
		c.P99 = p99.Round(time.Millisecond).String()
	}
	return c
}
