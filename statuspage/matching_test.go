package statuspage

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/feed"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestRulePageMatchesNow: a rule's page lists the tickets that match it
// when the page is asked for, evaluated over the live mirror (no desk
// request), with the reasons /ticket why gives; a ticket that grew old
// enough since the rule's last run shows, one that never matched does not.
func TestRulePageMatchesNow(t *testing.T) {
	const aging = `version: 1
rules:
  - name: aging
    query: "priority:4"
    if: 'now() - ticket.created_at > duration("1h")'
    every: 1h
    actions:
      - note: "old"
`
	start := time.Now().UTC().Truncate(time.Second)
	clock := clockwork.NewFakeClockAt(start)
	w := newWorldWith(t, aging, []scheduler.Option{scheduler.WithClock(clock)})
	created := start.Add(-30 * time.Minute)
	old := w.sim.Desk.AddTicket(sdsim.Ticket{Subject: "<b>ageing</b> printer", Status: 2, Priority: 4, Source: 1, RequesterID: 1, CreatedAt: created, UpdatedAt: created})
	low := w.sim.Desk.AddTicket(sdsim.Ticket{Subject: "low", Status: 2, Priority: 1, Source: 1, RequesterID: 1, CreatedAt: created, UpdatedAt: created})
	w.cycle(t) // half an hour old: no match yet
	clock.Advance(time.Hour)

	live := feed.NewLiveMirror(w.st)
	live.Attach(w.sched.Feed())
	before := len(w.sim.Desk.Requests())
	_, now := get(t, w.handler(t, WithMirror(live)), "/rules/aging")
	if n := len(w.sim.Desk.Requests()) - before; n != 0 {
		t.Errorf("the rule's page made %d desk requests, want 0", n)
	}
	for _, want := range []string{
		"Tickets that match now",
		fmt.Sprintf(">#%d</a></td><td>&lt;b&gt;ageing&lt;/b&gt; printer</td>", old.ID),
		"<code>priority:4</code> <span class=\"ok\">holds</span>",
		"<code>ticket.created_at</code> = ",
		"evaluated now over the 2 mirrored tickets",
	} {
		if !strings.Contains(now, want) {
			t.Errorf("/rules/aging lacks %q:\n%s", want, now)
		}
	}
	if strings.Contains(now, fmt.Sprintf(">#%d</a>", low.ID)) {
		t.Errorf("/rules/aging lists #%d, which does not match", low.ID)
	}

	// Without the mirror, the page shows the last run's (none).
	_, last := get(t, w.handler(t), "/rules/aging")
	if !strings.Contains(last, "Tickets that match it at its last run") || strings.Contains(last, fmt.Sprintf(">#%d</a>", old.ID)) {
		t.Errorf("/rules/aging without the mirror: want the last run's empty list:\n%s", last)
	}
	if code, _ := get(t, w.handler(t, WithMirror(live)), "/rules/aging"); code != http.StatusOK {
		t.Errorf("second read: %d", code)
	}
}
