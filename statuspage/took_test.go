package statuspage

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// TestFiringsTookFromMatchStart: "took" on /firings runs from when the
// ticket began to match the rule, not from the claim. A cap of one firing
// a cycle holds the second ticket back for ten minutes: its firing took
// ten minutes, the first one none.
func TestFiringsTookFromMatchStart(t *testing.T) {
	capped := cappedRules(1)
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	w := newWorldWith(t, capped, []scheduler.Option{scheduler.WithClock(clock)})
	first := w.sim.Desk.AddTicket(sdsim.Ticket{Subject: "urgent 1", Status: 2, Priority: 4, Source: 1, RequesterID: 1})
	second := w.sim.Desk.AddTicket(sdsim.Ticket{Subject: "urgent 2", Status: 2, Priority: 4, Source: 1, RequesterID: 1})
	w.cycle(t)
	clock.Advance(10 * time.Minute)
	w.cycle(t)
	_, body := get(t, w.handler(t, WithClock(clock.Now)), "/firings")
	for id, want := range map[int64]string{first.ID: "0s", second.ID: "10m"} {
		re := regexp.MustCompile(fmt.Sprintf(`(?s)<tr class="firing">.{0,400}?>#%d</a>.{0,400}?<td>([^<]*)</td></tr>`, id))
		m := re.FindStringSubmatch(body)
		if m == nil || m[1] != want {
			t.Errorf("ticket #%d: took %q, want %q:\n%s", id, m, want, body)
		}
	}
}
