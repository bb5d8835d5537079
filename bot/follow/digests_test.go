package follow

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// digestChat records digests, as a chat whose messages are numbered.
type digestChat struct {
	fail  int // refuse this many digests
	mu    sync.Mutex
	posts []chat.DigestMessage
	prevs []chat.DigestRef
}

func (n *digestChat) PostDigest(_ context.Context, m chat.DigestMessage, prev chat.DigestRef) (chat.DigestRef, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail > 0 {
		n.fail--
		return chat.DigestRef{}, fmt.Errorf("channel_not_found: %w", firing.ErrNotDelivered)
	}
	n.posts = append(n.posts, m)
	n.prevs = append(n.prevs, prev)
	if prev.TS != "" {
		return prev, nil
	}
	return chat.DigestRef{Channel: "CDESK", TS: fmt.Sprintf("%d.000100", len(n.posts))}, nil
}

func (n *digestChat) runs() ([]chat.DigestMessage, []chat.DigestRef) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]chat.DigestMessage(nil), n.posts...), append([]chat.DigestRef(nil), n.prevs...)
}

// withDigests plugs digests posting through n into a scheduler.
func withDigests(n DigestPoster) func(e *env) []scheduler.Option {
	return func(e *env) []scheduler.Option {
		return []scheduler.Option{scheduler.WithTickFollower(NewDigests(n, e.st, WithLogger(testLogger(e.t))))}
	}
}

const digestRules = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: hourly
    cron: "0 * * * *"
    digest: {breaching_within: 2h, list: 2}
  - name: nothing
    query: "status:open AND priority:4"
    cron: "0 * * * *"
    digest: {}
`

// A digest runs on its schedule over the mirror (no desk request of its
// own), counts by status, priority and group, lists the oldest unassigned
// and what breaches in its window; the day's later runs update its
// message (the ts kept in the store), the next day posts anew; a digest
// with nothing to say posts nothing.
func TestDigest(t *testing.T) {
	n := &digestChat{}
	e := newEnv(t, digestRules, withDigests(n))
	ag := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Andy", Email: "andy@example.com", Active: true})
	old := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "oldest", Priority: 2, CreatedAt: t0.Add(-48 * time.Hour)}).ID
	due := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "due soon", Priority: 3, ResponderID: ag.ID, DueBy: t0.Add(90 * time.Minute), GroupID: 3}).ID
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "newer", Priority: 2, Status: 3, CreatedAt: t0.Add(-time.Hour)})
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "later", Priority: 2, ResponderID: ag.ID, DueBy: t0.Add(5 * time.Hour)})
	e.runOnce() // 09:00: the digests are scheduled for 10:00
	if posts, _ := n.runs(); len(posts) != 0 {
		t.Fatalf("digest posted on first sight: %+v", posts)
	}
	e.clk.Advance(time.Hour)
	before := len(e.sim.Desk.Requests())
	e.runOnce()
	for _, r := range e.sim.Desk.Requests()[before:] {
		// The cycle syncs the mirror (/tickets, /ticket_form_fields); the
		// digest itself reads no ticket, person or group.
		if strings.HasPrefix(r.Path, "/api/v2/tickets/") || strings.HasPrefix(r.Path, "/api/v2/agents") ||
			strings.HasPrefix(r.Path, "/api/v2/groups") || strings.HasPrefix(r.Path, "/api/v2/requesters") {
			t.Errorf("the digest cycle requested %s", r.Path)
		}
	}
	posts, prevs := n.runs()
	if len(posts) != 1 || prevs[0].TS != "" {
		t.Fatalf("after an hour: %d digests (prev %+v), want 1 new", len(posts), prevs)
	}
	r := posts[0]
	if r.Rule != "hourly" || r.Channel != "#it-desk" || r.Total != 4 {
		t.Errorf("digest %+v", r)
	}
	if got := fmt.Sprint(r.ByStatus, r.ByPriority, r.ByGroup); got != "[{Open 3} {Pending 1}] [{Medium 3} {High 1}] [{no group 3} {group 3 1}]" {
		t.Errorf("counts %s", got)
	}
	if r.UnassignedTotal != 2 || len(r.Unassigned) != 2 || r.Unassigned[0].ID != old {
		t.Errorf("unassigned %d, first %+v; want 2, oldest #%d", r.UnassignedTotal, r.Unassigned, old)
	}
	if r.BreachingTotal != 1 || r.Breaching[0].ID != due || r.Overdue != 0 {
		t.Errorf("breaching %d %+v, want #%d only (within 2h of 10:00)", r.BreachingTotal, r.Breaching, due)
	}

	e.clk.Advance(time.Hour)
	e.runOnce()
	posts, prevs = n.runs()
	if len(posts) != 2 || prevs[1] != (chat.DigestRef{Channel: "CDESK", TS: "1.000100"}) {
		t.Fatalf("11:00 run: %d digests, prev %+v; want the 10:00 message updated", len(posts), prevs)
	}
	if posts[1].Overdue != 1 {
		t.Errorf("at 11:00 #%d is overdue: %+v", due, posts[1])
	}

	e.clk.Advance(14 * time.Hour) // 01:00 the next day
	e.runOnce()
	posts, prevs = n.runs()
	if len(posts) != 3 || prevs[2].TS != "" {
		t.Fatalf("next day: %d digests, prev %+v; want a new message", len(posts), prevs)
	}
	for _, p := range posts {
		if p.Rule == "nothing" {
			t.Errorf("a digest with nothing to say was posted: %+v", p)
		}
	}
}

// A digest the chat refused is tried again a minute later, not at its next
// scheduled run.
func TestDigestRetriedAfterFailure(t *testing.T) {
	n := &digestChat{fail: 1}
	e := newEnv(t, digestRules, withDigests(n))
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 2})
	e.runOnce()
	e.clk.Advance(time.Hour)
	e.runOnce() // 10:00: refused
	if posts, _ := n.runs(); len(posts) != 0 {
		t.Fatalf("posted %d despite the failure", len(posts))
	}
	e.next() // 10:01: retried
	if posts, _ := n.runs(); len(posts) != 1 || posts[0].Total != 1 {
		t.Fatalf("after the retry: %+v", posts)
	}
	e.next() // 10:02: nothing more until 11:00
	if posts, _ := n.runs(); len(posts) != 1 {
		t.Fatalf("%d digests by 10:02, want 1", len(posts))
	}
}

// A new leader (another scheduler on the same store) carries an every:
// digest's phase on from its last run in the store: it neither posts at
// once nor waits a whole period from its own start.
func TestDigestScheduleCarriedOn(t *testing.T) {
	n := &digestChat{}
	e := newEnv(t, `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: hourly
    every: 1h
    digest: {}
`, withDigests(n))
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 2})
	e.runOnce() // 09:00: scheduled for 10:00
	e.clk.Advance(time.Hour)
	e.runOnce() // 10:00: posted
	e.clk.Advance(30 * time.Minute)
	e.s = e.newScheduler(withDigests(n)) // 10:30: a new leader
	e.runOnce()
	if posts, _ := n.runs(); len(posts) != 1 {
		t.Fatalf("the new leader posted at once: %d digests by 10:30, want 1", len(posts))
	}
	e.clk.Advance(30 * time.Minute)
	e.runOnce() // 11:00: an hour after the last run, not after the new start
	if posts, _ := n.runs(); len(posts) != 2 || !posts[1].At.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("by 11:00 %d digests, want 2, the second at 11:00", len(posts))
	}
}
