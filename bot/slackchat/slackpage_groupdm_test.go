package slackchat_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackchat"

	"github.com/deskbot/deskbot/bot/chat"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// topLevel keeps the messages that are not thread replies.
func topLevel(ms []slackfake.Message) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range ms {
		if m.ThreadTS == "" {
			out = append(out, m)
		}
	}
	return out
}

// One cycle pages 15 tickets of one rule (more than its group_over, 5):
// each ticket has its own page and card, but alice, on call, gets ONE
// direct message naming them all (the list beyond the first lines
// continues in its thread). Steps retried after a crash or a lost answer
// find their ticket in it and send nothing again, alone or grouped. The
// next level, bob ten minutes later, gets one message too.
func TestOnCallGroupedPageDM(t *testing.T) {
	// The cards of 15 tickets read more of the desk in one (fake) minute
	// than the simulator's default budget.
	e := newPageEnvWith(t, pageRulesYAML, []sdsim.Option{sdsim.WithRateLimit(10000)}, []sdclient.Option{sdclient.WithRatePerMinute(10000)})
	ids := []int64{e.ticket}
	for i := range 14 {
		tk := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Printer %d jammed", i+1), Priority: 4})
		ids = append(ids, tk.ID)
	}
	e.poll()

	dms := e.dms("UALICE")
	top := topLevel(dms)
	if len(top) != 1 {
		t.Fatalf("alice got %d top-level DMs, want 1 grouped: %+v", len(top), top)
	}
	if err := has(top[0], "You are on call for 15 tickets", "it-urgent", "Core switch down", "Printer 9 jammed"); err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, m := range dms {
		if m.TS != top[0].TS && m.ThreadTS != top[0].TS {
			t.Fatalf("a DM outside the grouped message's thread: %+v", m)
		}
		all += m.Text + "\n" + unescaped(m.Blocks)
	}
	msg := unescaped(top[0].Blocks)
	if strings.Index(msg, "Core switch down") > strings.Index(msg, "Printer 1 jammed") || strings.Index(msg, "Printer 1 jammed") > strings.Index(msg, "Printer 2 jammed") {
		t.Errorf("the grouped DM is not in ticket order:\n%s", msg)
	}
	for _, id := range ids {
		if chat.TicketNumberAt(msg, id) < 0 {
			t.Errorf("the grouped DM does not name ticket #%d", id)
		}
	}
	if !strings.Contains(all, "Printer 14 jammed") || len(dms) < 2 {
		t.Errorf("the list does not continue in the thread (%d messages):\n%s", len(dms), all)
	}
	if n := len(topLevel(e.cards())); n != 15 {
		t.Errorf("%d page cards, want one per ticket (15)", n)
	}
	var reqs []oncall.PageRequest
	for _, id := range ids {
		p, ok, err := e.esc.Page(e.ctx, oncall.PageKey("page-urgent", id, 1))
		if err != nil || !ok || p.Step != 1 || p.Sending || p.Target == nil || p.Target.ID != "alice@example.com" {
			t.Fatalf("page of #%d: %+v %v %v", id, p, ok, err)
		}
		reqs = append(reqs, oncall.PageRequest{Page: p, Target: *p.Target, Step: 1, Attempt: 2, Retry: true,
			TicketID: id, Channel: p.Channel, Text: p.Text})
	}

	// The last ticket is named only by number in the message: a retry of
	// its step, alone, finds it there.
	if err := e.slack.Page(e.ctx, reqs[len(reqs)-1]); err != nil {
		t.Fatal(err)
	}
	// So does a retry of them all, grouped.
	for i, err := range e.slack.PageGroup(e.ctx, reqs) {
		if err != nil {
			t.Fatalf("retry of #%d: %v", ids[i], err)
		}
	}
	if n := len(e.dms("UALICE")); n != len(dms) {
		t.Fatalf("alice has %d DMs after the retries, want still %d", n, len(dms))
	}

	// Nobody acknowledged: level 2 pages bob for all 15 at the same tick,
	// in one message.
	e.tick(10 * time.Minute)
	if top := topLevel(e.dms("UBOB")); len(top) != 1 {
		t.Fatalf("bob got %d top-level DMs, want 1 grouped", len(top))
	} else if err := has(top[0], "You are on call for 15 tickets"); err != nil {
		t.Fatal(err)
	}
	if top := topLevel(e.dms("UALICE")); len(top) != 1 {
		t.Fatalf("alice got %d top-level DMs after level 2, want still 1", len(top))
	}
}

// Up to group_over pages to one person in a cycle are paged one DM each,
// as before.
func TestOnCallFewPagesNotGrouped(t *testing.T) {
	e := newPageEnv(t)
	for i := range 4 {
		e.sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("Printer %d jammed", i+1), Priority: 4})
	}
	e.poll()
	top := topLevel(e.dms("UALICE"))
	if len(top) != 5 {
		t.Fatalf("alice got %d DMs for 5 pages, want 5", len(top))
	}
	for _, m := range top {
		if strings.Contains(string(m.Blocks), slackchat.GroupPrefix) {
			t.Fatalf("a grouped DM for 5 pages: %s", m.Blocks)
		}
	}
}
