package scheduler

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// The embedded demo desk of cmd/deskbot (embeddedSeed, embeddedTickets):
// what a newcomer meets with `DESKBOT_RULES=rules.example.yaml deskbot`.
const (
	demoSeed    = 1
	demoTickets = 200
)

// TestExampleOnTheDemoDeskIsCalm is issue 17's done-when: the example rules
// on the embedded demo desk, a cycle a minute for 10 minutes of fake-clock
// time, post at most 10 top-level alert messages and at most 2 pages, and
// every ticket a rule with an alert or a page matched is named in a message
// (each exactly once per rule). Before storm control and the example's
// fix, the same run posted 67 alerts and 7 pages.
func TestExampleOnTheDemoDeskIsCalm(t *testing.T) {
	y, err := os.ReadFile(filepath.Join("..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pager := &recPager{}
	var esc *oncall.Escalator
	e := newEnvNotifier(t, []sdsim.Option{sdsim.WithGenerated(demoSeed, demoTickets)}, true, string(y),
		func(cfg *config) { cfg.escalator = lazyEscalator{&esc} })
	esc, err = oncall.NewEscalator(mustRules(t, string(y)).OnCall(), e.st, pager, nil)
	if err != nil {
		t.Fatal(err)
	}
	chat := map[string]bool{} // rules that alert or page
	for _, r := range e.s.set.Rules() {
		for _, k := range r.ActionKinds() {
			chat[r.Name] = chat[r.Name] || k == rules.ActionAlert || k == rules.ActionPage
		}
	}
	matched := map[string]map[int64]bool{} // rule -> tickets it matched in some cycle
	var perCycle []int
	for minute := range 10 {
		res := e.runOnce()
		if !allComplete(res) {
			t.Fatalf("minute %d: incomplete cycle %+v", minute, res)
		}
		if _, err := e.s.TickPages(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, d := range rules.Plan(e.s.set, e.s.feed.Snapshot(), e.clk.Now()) {
			if chat[d.Rule] {
				if matched[d.Rule] == nil {
					matched[d.Rule] = map[int64]bool{}
				}
				matched[d.Rule][d.TicketID] = true
			}
		}
		perCycle = append(perCycle, e.notif.messages())
		e.clk.Advance(time.Minute)
	}

	msgs, pages := e.notif.messages(), len(pager.sent())
	var sizes []int
	for _, g := range e.notif.groupList() {
		sizes = append(sizes, len(g.Alerts))
	}
	total := 0
	for name, ids := range matched {
		named := e.notif.named(name)
		if name == "page-urgent-unassigned" {
			named = map[int64]int{}
			pager.mu.Lock()
			for _, r := range pager.reqs {
				named[r.TicketID]++
			}
			pager.mu.Unlock()
		}
		for id := range ids {
			total++
			if named[id] != 1 {
				t.Errorf("rule %s matched ticket #%d, named in %d messages; want exactly 1", name, id, named[id])
			}
		}
	}
	t.Logf("10 minutes of the example rules on the demo desk: %d top-level alert messages (messages after each minute %v; %d single cards, groups of %v), %d pages, %d (rule, ticket) matches, each named once",
		msgs, perCycle, len(e.notif.list()), sizes, pages, total)
	if msgs > 10 {
		t.Errorf("%d top-level alert messages, want at most 10", msgs)
	}
	if pages > 2 {
		t.Errorf("%d pages (%v), want at most 2", pages, pager.sent())
	}
	if total == 0 || !slices.Contains(sizes, 20) {
		t.Errorf("the demo should show the caps and a grouped message: groups %v, %d matches", sizes, total)
	}
}
