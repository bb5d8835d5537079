package statuspage

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/planreport"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

type navItem struct {
	Path, Label string
	Current     bool
}

func nav(current string) []navItem {
	items := []navItem{{"/", "Overview", false}, {"/rules", "Rules", false}, {"/firings", "Firings", false}, {"/oncall", "On-call", false}, {"/plan", "Plan", false}, {"/backtest", "Backtest", false}}
	for i := range items {
		items[i].Current = items[i].Path == current
	}
	return items
}

// base is what every page carries.
type base struct {
	Nav    []navItem
	Now    time.Time
	NoRule string // why no rules run here, or ""
	DryRun bool
}

// view is the scheduler's view, or the loaded rules without one.
func (h *Handler) view(ctx context.Context) (statusView, string, error) {
	if h.sched == nil {
		v := statusView{At: h.cfg.now()}
		if h.cfg.rules != nil {
			v.Set = h.cfg.rules()
		}
		return v, "No rules run in this process (DESKBOT_RULES names no file and there is no rules.yaml): nothing is mirrored or fired.", nil
	}
	v, err := viewOf(ctx, h.sched.Memory())
	return v, "", err
}

func (h *Handler) base(page string, v statusView, noRule string) base {
	return base{Nav: nav(page), Now: v.At, NoRule: noRule, DryRun: v.DryRun}
}

// ruleRows are the rules of v as /rules shows them: per rule its
// schedule, last and next run, what matches now, open episodes, held
// back, over budget, and the firings per hour over the last day.
type ruleRow struct {
	Name, Query, If, Schedule, Priority, Actions string
	LastRun, NextRun                             time.Time
	NextIn                                       string
	Outcome                                      string
	Requests                                     int
	Matching, Failing, Open, Held                int
	Evaluated                                    bool      // the rule was evaluated in this process
	MatchedAt                                    time.Time // when: its last evaluation
	OverBudget                                   string
	FiredDay                                     int
	Chart                                        template.HTML
}

func schedule(r *rules.Rule) string {
	if r.Cron != "" {
		return "cron " + r.Cron
	}
	return "every " + rules.ShortDuration(cmp.Or(r.Every, rules.DefaultEvery))
}

func kinds(r *rules.Rule) string {
	var ks []string
	for _, k := range r.ActionKinds() {
		ks = append(ks, string(k))
	}
	return strings.Join(ks, ", ")
}

func (h *Handler) ruleRows(ctx context.Context, v statusView, only string) ([]ruleRow, error) {
	if v.Set == nil {
		return nil, nil
	}
	counts, err := h.ledger.FiredPerHour(ctx, v.At.Add(-hours*time.Hour), only)
	if err != nil {
		return nil, err
	}
	perRule := map[string]*perHour{}
	for _, c := range counts {
		if perRule[c.Rule] == nil {
			perRule[c.Rule] = &perHour{}
		}
		perRule[c.Rule].add(c)
	}
	jobs := map[string]scheduler.JobStatus{}
	for _, j := range v.Ready.Jobs {
		for _, n := range j.Rules {
			jobs[n] = j
		}
	}
	var rows []ruleRow
	for _, r := range v.Set.Rules() {
		if only != "" && r.Name != only {
			continue
		}
		rec, ok := v.Runs[r.Name]
		next := plan.NextRun(r, rec, ok, v.At)
		row := ruleRow{Name: r.Name, Query: r.Query, If: r.If, Schedule: schedule(r), Priority: string(r.Priority),
			Actions: kinds(r), LastRun: rec.LastRun, NextRun: next, Held: len(v.Held[r.Name]), OverBudget: v.OverBudget[r.Name],
		}
		day := perRule[r.Name]
		if day == nil {
			day = &perHour{}
		}
		for _, n := range day {
			row.FiredDay += n
		}
		if !next.After(v.At) {
			row.NextIn = "due now"
		} else {
			row.NextIn = "in " + rules.ShortDuration(next.Sub(v.At).Round(time.Second))
		}
		if j, ok := jobs[r.Name]; ok {
			row.Outcome, row.Requests = j.LastOutcome, j.LastRequests
			if row.LastRun.IsZero() {
				row.LastRun = j.LastStart
			}
		}
		if m, ok := v.Matches[r.Name]; ok {
			row.Evaluated, row.MatchedAt, row.Matching, row.Failing = true, m.At, len(m.Tickets), len(m.Failed)
		}
		open, err := h.ledger.OpenEpisodes(ctx, r.Name)
		if err != nil {
			return nil, err
		}
		row.Open = len(open)
		row.Chart = hourChart(*day, only != "")
		rows = append(rows, row)
	}
	return rows, nil
}

type rulesData struct {
	base
	Rules []ruleRow
}

func (h *Handler) rulesPage(r *http.Request) (any, error) {
	v, noRule, err := h.view(r.Context())
	if err != nil {
		return nil, err
	}
	rows, err := h.ruleRows(r.Context(), v, "")
	return rulesData{base: h.base("/rules", v, noRule), Rules: rows}, err
}

type ruleData struct {
	base
	Rule     ruleRow
	Matched  string // when the matching tickets were found (matchedWhen)
	MatchNow bool   // they were evaluated for this page
	Matching []matchRow
	More     int
	Held     []plan.HeldTicket
	Firings  []firingRow
}

type matchRow struct {
	TicketID int64
	Subject  string
	Terms    []rules.TermResult
	Values   []rules.NamedValue
	State    string // the ledger's word: fired, open episode, ...
	Err      string
}

const listMax = 100

func (h *Handler) rulePage(r *http.Request) (any, error) {
	ctx := r.Context()
	name := r.PathValue("name")
	v, noRule, err := h.view(ctx)
	if err != nil {
		return nil, err
	}
	if v.Set == nil || v.Set.Rule(name) == nil {
		return nil, errNotFound
	}
	rows, err := h.ruleRows(ctx, v, name)
	if err != nil {
		return nil, err
	}
	d := ruleData{base: h.base("/rules", v, noRule), Rule: rows[0], Held: v.Held[name]}
	open, err := h.ledger.OpenEpisodes(ctx, name)
	if err != nil {
		return nil, err
	}
	isOpen := map[int64]bool{}
	for _, id := range open {
		isOpen[id] = true
	}
	m := v.Matches[name]
	var byID map[int64]*sdclient.Ticket
	if h.cfg.mirror != nil && h.sched != nil {
		// The tickets that match now: the rule over the mirror as it is.
		var n int
		if m, byID, n, err = h.matchingNow(ctx, v, v.Set.Rule(name)); err != nil {
			return nil, err
		}
		d.Matched, d.MatchNow = matchedWhen(true, n, v.At), true
		d.Rule.Evaluated, d.Rule.Matching, d.Rule.Failing, d.Rule.MatchedAt = true, len(m.Tickets), len(m.Failed), v.At
	} else {
		d.Matched = matchedWhen(false, 0, m.At)
	}
	ids := slices.Clone(m.Tickets)
	for id := range m.Failed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if byID == nil {
		byID = h.tickets(ids[:min(len(ids), listMax)])
	}
	for i, id := range ids {
		if i >= listMax {
			d.More = len(ids) - listMax
			break
		}
		row := matchRow{TicketID: id, State: "not fired yet: fires at the rule's next run", Err: m.Failed[id]}
		if t := byID[id]; t != nil {
			// Why, as /ticket why says it: the query's terms and the
			// values the if read, on the ticket as mirrored now.
			row.Subject = t.Subject
			for _, e := range v.Set.Explain(t, v.At) {
				if e.Rule == name {
					row.Terms, row.Values = e.Terms, e.Values
				}
			}
		}
		if isOpen[id] {
			row.State = "fired in this episode: fires again only after the ticket stops matching"
		}
		d.Matching = append(d.Matching, row)
	}
	fs, err := h.ledger.RecentFirings(ctx, store.FiringFilter{Rule: name, Limit: listMax})
	if err != nil {
		return nil, err
	}
	d.Firings = h.firingRows(fs, v)
	return d, nil
}

type firingRow struct {
	store.FiringRow
	Subject  string
	Outcome  string
	Actions  string
	Took     string
	Resumed  bool
	Deferred bool
}

// tickets looks ids up in the mirror (none without a scheduler).
func (h *Handler) tickets(ids []int64) map[int64]*sdclient.Ticket {
	if h.sched == nil {
		return nil
	}
	return h.sched.Memory().Feed.Tickets(ids)
}

func (h *Handler) firingRows(fs []store.FiringRow, v statusView) []firingRow {
	ids := make([]int64, len(fs))
	for i, f := range fs {
		ids[i] = f.TicketID
	}
	subjects := map[int64]string{}
	for id, t := range h.tickets(ids) {
		subjects[id] = t.Subject
	}
	out := make([]firingRow, 0, len(fs))
	for _, f := range fs {
		row := firingRow{FiringRow: f, Subject: subjects[f.TicketID], Resumed: f.Attempts > 1, Deferred: f.Released}
		total := 0
		if v.Set != nil {
			if r := v.Set.Rule(f.Rule); r != nil {
				total = len(r.ActionKinds())
				row.Actions = kinds(r)
			}
		}
		switch {
		case f.Done:
			row.Outcome = "done"
			// From when the ticket began to match the rule (the
			// episode's match start, as the scheduler saw it) to the
			// last action: how long the ticket waited for deskbot.
			row.Took = rules.ShortDuration(f.FiredAt.Sub(f.MatchedAt).Round(time.Second))
		case f.Released:
			row.Outcome = "deferred"
		default:
			row.Outcome = "pending"
		}
		if total > 0 {
			row.Actions = fmt.Sprintf("%s (%d of %d done)", row.Actions, min(f.Actions, total), total)
			if f.Done {
				row.Actions = fmt.Sprintf("%s (all %d done)", kinds(v.Set.Rule(f.Rule)), total)
			}
		}
		out = append(out, row)
	}
	return out
}

type firingsData struct {
	base
	Rule, Outcome, Ticket string
	RuleNames             []string
	Firings               []firingRow
	Limit                 int
}

func (h *Handler) firingsPage(r *http.Request) (any, error) {
	ctx := r.Context()
	v, noRule, err := h.view(ctx)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	d := firingsData{base: h.base("/firings", v, noRule), Rule: q.Get("rule"), Outcome: q.Get("outcome"), Ticket: strings.TrimPrefix(q.Get("ticket"), "#"), Limit: 200}
	f := store.FiringFilter{Rule: d.Rule, Limit: d.Limit}
	switch d.Outcome {
	case "done", "pending":
		f.State = d.Outcome
	case "":
	default:
		d.Outcome = ""
	}
	if d.Ticket != "" {
		id, err := strconv.ParseInt(d.Ticket, 10, 64)
		if err != nil || id <= 0 {
			d.Ticket = ""
		} else {
			f.TicketID = id
		}
	}
	if v.Set != nil {
		for _, r := range v.Set.Rules() {
			d.RuleNames = append(d.RuleNames, r.Name)
		}
	}
	fs, err := h.ledger.RecentFirings(ctx, f)
	if err != nil {
		return nil, err
	}
	d.Firings = h.firingRows(fs, v)
	return d, nil
}

type oncallData struct {
	base
	Configured bool
	Schedules  []oncallRow
	Pages      []pageRow
}

func (h *Handler) oncallPage(r *http.Request) (any, error) {
	ctx := r.Context()
	v, noRule, err := h.view(ctx)
	if err != nil {
		return nil, err
	}
	d := oncallData{base: h.base("/oncall", v, noRule)}
	if v.Set != nil && v.Set.OnCall() != nil {
		d.Configured = true
		for _, st := range v.Set.OnCall().WhoIsOnCall(v.At) {
			d.Schedules = append(d.Schedules, oncallRow{Status: st, NowName: h.person(st.Now.Member), NextName: h.person(st.Next.Member)})
		}
	}
	pages, err := h.ledger.OpenPages(ctx, listMax)
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		d.Pages = append(d.Pages, pageRow{Page: p, AckedByName: h.person(p.AckedBy)})
	}
	return d, nil
}

type planData struct {
	base
	Report string // what `deskbot rules plan` prints
}

// planPage is `deskbot rules plan` as a page: the command's own report
// (planreport), written from the running scheduler's memory (each rule's
// last evaluation on the mirror) and the ledger instead of a dry-run cycle
// against the desk.
func (h *Handler) planPage(r *http.Request) (any, error) {
	ctx := r.Context()
	v, noRule, err := h.view(ctx)
	if err != nil {
		return nil, err
	}
	d := planData{base: h.base("/plan", v, noRule)}
	if v.Set == nil || h.sched == nil {
		return d, nil
	}
	o, err := outlookOf(ctx, h.sched.Memory())
	if err != nil {
		return nil, err
	}
	rep := planreport.Report{
		Source: "the rules running here, from each rule's last evaluation on the mirror", Set: v.Set, Outlook: o,
		Cycle:      scheduler.Cycle{Sync: &feed.Synced{Tickets: v.Tickets}},
		LedgerNote: "tickets the ledger shows as fired are left out",
		Workspaces: max(1, len(v.Ready.Mirror)), Budget: h.cfg.budget, Rate: h.cfg.rate,
	}
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		return nil, err
	}
	d.Report = b.String()
	return d, nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func funcs(link func(int64) string) template.FuncMap {
	return template.FuncMap{
		"stamp": stamp,
		"ticketURL": func(id int64) string {
			if link == nil {
				return ""
			}
			return link(id)
		},
		"ago": func(now, t time.Time) string {
			if t.IsZero() {
				return ""
			}
			if d := now.Sub(t); d >= 0 {
				return rules.ShortDuration(d.Round(time.Second)) + " ago"
			}
			return "in " + rules.ShortDuration(t.Sub(now).Round(time.Second))
		},
		"value": func(v any) string { return fmt.Sprint(v) },
		"inc":   func(i int) int { return i + 1 },
		"join":  join,
		"ids":   ids,
		"plural": func(n int, what string) string {
			if n == 1 {
				return "1 " + what
			}
			return strconv.Itoa(n) + " " + what + "s"
		},
	}
}
