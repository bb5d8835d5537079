package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/plan"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// groupRecPager is a recPager that also groups.
type groupRecPager struct {
	recPager
	gmu    sync.Mutex
	groups [][]int64
}

func (p *groupRecPager) PageGroup(_ context.Context, rs []oncall.PageRequest) []error {
	p.gmu.Lock()
	defer p.gmu.Unlock()
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.TicketID
	}
	p.groups = append(p.groups, ids)
	return make([]error, len(rs))
}

// A cycle that pages more tickets of one rule than its group_over starts
// each page (one page per ticket) without its first step, then ticks once:
// the person on call gets one grouped notification naming them all. A
// later cycle with a single new ticket pages it at once, alone.
func TestCyclePagesGroupedToOnePerson(t *testing.T) {
	pager := &groupRecPager{}
	var esc *oncall.Escalator
	e := newEnv(t, pageRules, func(cfg *config) { cfg.escalator = lazyEscalator{&esc} })
	var err error
	esc, err = oncall.NewEscalator(mustRules(t, pageRules).OnCall(), e.st, pager, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 7 {
		tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Mail down %d", i), Priority: 4})
		ids = append(ids, tk.ID)
	}
	if res := e.runOnce(); !allComplete(res) {
		t.Fatalf("incomplete %+v", res)
	}
	pager.gmu.Lock()
	groups := pager.groups
	pager.gmu.Unlock()
	if len(groups) != 1 || len(groups[0]) != 7 || len(pager.sent()) != 0 {
		t.Fatalf("groups %v, single pages %q; want one group of the 7 tickets", groups, pager.sent())
	}
	for _, id := range ids {
		p, ok, err := esc.Page(t.Context(), oncall.PageKey("page-urgent", id, 1))
		if err != nil || !ok || p.Step != 1 || p.Sending || p.GroupOver != 5 {
			t.Fatalf("page of #%d: step %d sending %v group_over %d (%v %v)", id, p.Step, p.Sending, p.GroupOver, ok, err)
		}
		if n := e.notesWith(id, "Paged on-call."); len(n) != 1 {
			t.Fatalf("#%d has %d notes after the page, want 1", id, len(n))
		}
	}
	if got := metricValue(t, e.s.m.Exec.Pages.WithLabelValues("page-urgent", "started")); got != 7 {
		t.Errorf("pages started metric %v, want 7", got)
	}

	tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer on fire", Priority: 4})
	e.next()
	if got := pager.sent(); len(got) != 1 || got[0] != fmt.Sprintf("#%d L1 alice@example.com", tk.ID) {
		t.Fatalf("a single new page: %q", got)
	}
}

// A dry run says that the cycle would have paged the tickets with one
// direct message, and pages nobody.
func TestDryRunSaysPagesGrouped(t *testing.T) {
	var outlooks []plan.Outlook
	e, _, pager := newPageEnv(t, WithDryRun(true), WithOutlook(func(o plan.Outlook) { outlooks = append(outlooks, o) }))
	for i := range 7 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Mail down %d", i), Priority: 4})
	}
	e.runOnce()
	if len(outlooks) != 1 {
		t.Fatalf("%d outlooks, want 1", len(outlooks))
	}
	var all []string
	for _, l := range outlooks[0].Lines() {
		all = append(all, l.Text)
	}
	want := "dry run: would have paged it-urgent for 7 tickets with one direct message to the person paged, each ticket its own page and card (rule page-urgent, over its group_over 5)"
	if !slices.Contains(all, want) {
		t.Fatalf("lines lack %q:\n%s", want, strings.Join(all, "\n"))
	}
	if got := pager.sent(); len(got) != 0 {
		t.Fatalf("dry run paged: %q", got)
	}
}
