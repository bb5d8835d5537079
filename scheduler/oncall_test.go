package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// pageRules page the on-call of policy it-urgent (schedule it-primary:
// alice, then bob, daily from 2025-03-10 09:00 UTC; then boss) for every
// urgent unassigned ticket, and note it.
var pageRules = testdata("page_rules.yaml")

// recPager records the escalation steps delivered.
type recPager struct {
	mu   sync.Mutex
	reqs []oncall.PageRequest
}

func (p *recPager) Page(_ context.Context, r oncall.PageRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, r)
	return nil
}

func (p *recPager) sent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.reqs {
		out = append(out, fmt.Sprintf("#%d L%d %s", r.TicketID, r.Level+1, r.Target.ID))
	}
	return out
}

// newPageEnv is newEnv with an escalator over the real store.
func newPageEnv(t *testing.T, opts ...Option) (*env, *oncall.Escalator, *recPager) {
	t.Helper()
	pager := &recPager{}
	var esc *oncall.Escalator
	e := newEnv(t, pageRules, append([]Option{func(cfg *config) {
		// The escalator needs the store newEnv opens: build it lazily.
		cfg.escalator = lazyEscalator{&esc}
	}}, opts...)...)
	var err error
	esc, err = oncall.NewEscalator(mustRules(t, pageRules).OnCall(), e.st, pager, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, esc, pager
}

// lazyEscalator forwards to an escalator created after the scheduler.
type lazyEscalator struct{ e **oncall.Escalator }

func (l lazyEscalator) Start(ctx context.Context, s oncall.PageSpec, now time.Time) (oncall.Page, bool, error) {
	return (*l.e).Start(ctx, s, now)
}
func (l lazyEscalator) Tick(ctx context.Context, now time.Time) (oncall.TickStats, error) {
	return (*l.e).Tick(ctx, now)
}
func (l lazyEscalator) SetConfig(c *oncall.Config) { (*l.e).SetConfig(c) }

func TestPageActionStartsOnePagePerEpisode(t *testing.T) {
	e, esc, pager := newPageEnv(t)
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4})
	for range 5 {
		if res := e.runOnce(); !allComplete(res) {
			t.Fatalf("incomplete %+v", res)
		}
		e.clk.Advance(time.Minute)
	}
	// 12:00 UTC on 2025-03-10: alice's shift (09:00 to 09:00).
	if got, want := strings.Join(pager.sent(), "; "), fmt.Sprintf("#%d L1 alice@example.com", tk.ID); got != want {
		t.Fatalf("pages after 5 cycles: %q, want %q", got, want)
	}
	key := oncall.PageKey("page-urgent", tk.ID, 1)
	p, ok, err := esc.Page(t.Context(), key)
	if err != nil || !ok || p.Text != fmt.Sprintf("Urgent #%d: Mail down", tk.ID) || p.Channel != "#it-oncall" || p.Policy != "it-urgent" {
		t.Fatalf("page %s: %+v %v %v", key, p, ok, err)
	}
	if n := e.notesWith(tk.ID, "Paged on-call."); len(n) != 1 {
		t.Fatalf("%d notes, want 1", len(n))
	}
	if got := metricValue(t, e.s.m.Exec.Pages.WithLabelValues("page-urgent", "started")); got != 1 {
		t.Errorf("pages started metric %v, want 1", got)
	}

	// Nobody acknowledges: 10 minutes after the first page, level 2.
	e.clk.Advance(6 * time.Minute)
	if _, err := e.s.TickPages(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := pager.sent(); len(got) != 2 || got[1] != fmt.Sprintf("#%d L2 boss@example.com", tk.ID) {
		t.Fatalf("after the level's wait: %q", got)
	}

	// The ticket stops matching (assigned) and matches again (unassigned):
	// a new episode starts a new page.
	e.assign(tk.ID, sdsim.DefaultAgentID)
	e.runOnce()
	e.assign(tk.ID, 0)
	e.next()
	if got := pager.sent(); len(got) != 3 || got[2] != fmt.Sprintf("#%d L1 alice@example.com", tk.ID) {
		t.Fatalf("second episode: %q", got)
	}
	if _, ok, _ := esc.Page(t.Context(), oncall.PageKey("page-urgent", tk.ID, 2)); !ok {
		t.Fatal("no page for episode 2")
	}
}

func TestPageActionDryRunAndMissingEscalator(t *testing.T) {
	e, _, pager := newPageEnv(t, WithDryRun(true))
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4})
	e.runOnce()
	e.clk.Advance(time.Hour)
	if _, err := e.s.TickPages(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := pager.sent(); len(got) != 0 {
		t.Fatalf("dry run paged: %q", got)
	}
	_, err := New(testLogger(t), firing.ClientDesk(e.client), mustRules(t, pageRules), e.st, nil)
	if err == nil || !strings.Contains(err.Error(), `rule "page-urgent" pages on-call, but no escalator is configured`) {
		t.Fatalf("New without escalator: %v", err)
	}
}

func TestTickJobEscalatesOnSchedule(t *testing.T) {
	e, _, pager := newPageEnv(t, func(cfg *config) { cfg.tickEvery = 30 * time.Second })
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4})
	if err := e.s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.s.Stop(context.Background()) })
	eventually(t, "the first page", 20*time.Second, func() bool { return len(pager.sent()) == 1 })
	want := fmt.Sprintf("#%d L2 boss@example.com", tk.ID)
	eventually(t, "level 2 from the scheduled ticks", 20*time.Second, func() bool {
		if len(pager.sent()) >= 2 {
			return true
		}
		e.clk.Advance(30 * time.Second)
		return false
	})
	if got := pager.sent(); got[1] != want {
		t.Fatalf("second page %q, want %q", got[1], want)
	}
	if got := e.clk.Since(t0); got < 10*time.Minute {
		t.Fatalf("level 2 paged %v after the first page, before the level's 10m", got)
	}
	if metricValue(t, e.s.m.ticks) < 1 {
		t.Error("tick metric not counted")
	}
}

// TestPageLogsNameRuleAndTicket: the log lines about a page action carry
// the rule and the ticket, like every other line about a firing.
func TestPageLogsNameRuleAndTicket(t *testing.T) {
	e, _, _ := newPageEnv(t)
	var buf bytes.Buffer
	e.s.logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := e.s.set.Rule("page-urgent")
	a := r.ActionKinds()
	if len(a) == 0 || a[0] != rules.ActionPage {
		t.Fatalf("rule actions %v, want a page first", a)
	}
	act := rules.Action{Kind: rules.ActionPage, Policy: "it-urgent", Channel: "#it-oncall", Text: "x"}
	f := rules.Firing{Key: rules.FiringKey{Rule: r.Name, TicketID: 42}, Episode: 1, Seq: 1}
	deps := &firing.Deps{Ledger: e.s.ledger, Desk: e.s.desk, Pages: e.s.paging, Now: e.s.cfg.clock.Now, Metrics: e.s.m.Exec}
	for range 2 { // the second finds the page already started
		if _, err := firing.StartPage(t.Context(), deps, e.s.logger, r, f, 42, act, false); err != nil {
			t.Fatal(err)
		}
	}
	lines := 0
	for l := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines++
		if rec["rule"] != "page-urgent" || rec["ticket"] != float64(42) {
			t.Errorf("log line without its rule and ticket: %s", l)
		}
	}
	if lines == 0 {
		t.Fatal("no log line about the page already started")
	}
}

// slowPager is a pager whose page goes out a while after it was asked
// for (a slow chat, a page behind others): the clock moves on meanwhile.
type slowPager struct {
	recPager
	clk   interface{ Advance(time.Duration) }
	delay time.Duration
}

func (p *slowPager) Page(ctx context.Context, r oncall.PageRequest) error {
	p.clk.Advance(p.delay)
	return p.recPager.Page(ctx, r)
}

// Issue 23, 13: the note a rule writes after its page says when the page
// went out, not when the cycle began: texts are rendered as each action
// is performed.
func TestPageNoteSaysWhenThePageWentOut(t *testing.T) {
	yaml := strings.Replace(pageRules, `- note: "Paged on-call."`, `- note: "Paged on-call at {{ now() }}, due {{ until(ticket.due_by) }}."`, 1)
	pager := &slowPager{delay: 65 * time.Second}
	var esc *oncall.Escalator
	e := newEnv(t, yaml, func(cfg *config) { cfg.escalator = lazyEscalator{&esc} })
	pager.clk = e.clk
	var err error
	esc, err = oncall.NewEscalator(mustRules(t, yaml).OnCall(), e.st, pager, nil)
	if err != nil {
		t.Fatal(err)
	}
	begun := e.clk.Now()
	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4, DueBy: begun.Add(30 * time.Minute)})
	if res := e.runOnce(); !allComplete(res) {
		t.Fatalf("incomplete %+v", res)
	}
	if len(pager.sent()) != 1 {
		t.Fatalf("pages %q, want 1", pager.sent())
	}
	paged := begun.Add(65 * time.Second).UTC()
	want := fmt.Sprintf("Paged on-call at %s, due in 29 min.", paged.Format(time.RFC3339))
	if n := e.notesWith(tk.ID, want); len(n) != 1 {
		var all []string
		for _, c := range e.notesWith(tk.ID, "Paged") {
			all = append(all, c.Body)
		}
		t.Fatalf("notes %q, want one with %q (the cycle began at %s)", all, want, begun.UTC().Format(time.TimeOnly))
	}
}
