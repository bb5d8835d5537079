package scheduler

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// dmNotifier records direct messages over a recNotifier.
type dmNotifier struct {
	*recNotifier
	mu  sync.Mutex
	dms []DM
}

func (n *dmNotifier) DM(_ context.Context, d DM) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dms = append(n.dms, d)
	return nil
}

func (n *dmNotifier) AlreadyDMed(_ context.Context, d DM) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range n.dms {
		if x.Key == d.Key {
			return true, nil
		}
	}
	return false, nil
}

func (n *dmNotifier) list() []DM {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]DM(nil), n.dms...)
}

const nudgeRules = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: nudge
    query: status:open
    if: 'has_due(ticket) && ticket.due_by - now() < duration("30m")'
    actions:
      - dm: {to: assignee, text: "#{{ ticket.id }} breaches at {{ ticket.due_by }}"}
`

// 30 minutes before due_by the assignee gets one direct message, with
// their e-mail from the desk (one agent look-up, then cached); an
// unassigned ticket's goes to the desk channel saying why; neither
// repeats in later cycles.
func TestDMNudgeBeforeBreach(t *testing.T) {
	n := &dmNotifier{recNotifier: &recNotifier{}}
	e := newEnv(t, nudgeRules)
	e.s.notifier = n
	ag := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Andy", LastName: "Agent", Email: "andy@example.com", Active: true})
	soon := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "soon", Priority: 2, ResponderID: ag.ID, DueBy: t0.Add(20 * time.Minute)}).ID
	later := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "later", Priority: 2, ResponderID: ag.ID, DueBy: t0.Add(3 * time.Hour)}).ID
	orphan := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "orphan", Priority: 2, DueBy: t0.Add(10 * time.Minute)}).ID
	e.runOnce()
	before := agentReads(e.sim)
	for range 3 {
		e.next()
	}
	dms := n.list()
	if len(dms) != 2 {
		t.Fatalf("sent %d direct messages, want 2: %+v", len(dms), dms)
	}
	byTicket := map[int64]DM{}
	for _, d := range dms {
		byTicket[d.Ticket.ID] = d
	}
	if d := byTicket[soon]; d.To != "andy@example.com" || d.Who != "the assignee Andy Agent" || d.Channel != "#it-desk" ||
		!strings.HasPrefix(d.Text, "#"+strconv.FormatInt(soon, 10)+" breaches at ") || !strings.HasPrefix(d.Key, "deskbot:f=nudge/") {
		t.Errorf("dm of ticket %d: %+v", soon, d)
	}
	if d := byTicket[orphan]; d.To != "" || d.Why != "ticket #"+strconv.FormatInt(orphan, 10)+" has no assignee" || d.Channel != "#it-desk" {
		t.Errorf("dm of unassigned ticket %d: %+v", orphan, d)
	}
	if _, ok := byTicket[later]; ok {
		t.Errorf("ticket %d due in 3h was nudged", later)
	}
	if got := agentReads(e.sim); got != 1 || before != 1 {
		t.Errorf("agent read %d times (%d in the first cycle), want once: the e-mail is cached", got, before)
	}
	// Later the far ticket comes within 30 minutes and is nudged once.
	e.clk.Advance(2*time.Hour + 40*time.Minute)
	e.runOnce()
	e.next()
	if got := len(n.list()); got != 3 {
		t.Errorf("%d direct messages after the third ticket came due, want 3", got)
	}
}

func agentReads(sim *sdsim.Server) int {
	n := 0
	for _, r := range sim.Desk.Requests() {
		if strings.HasPrefix(r.Path, "/api/v2/agents/") {
			n++
		}
	}
	return n
}

// Without a DMNotifier a dm: is posted as an alert to its channel,
// naming the person and why.
func TestDMWithoutDMNotifier(t *testing.T) {
	e := newEnv(t, nudgeRules)
	id := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "orphan", Priority: 2, DueBy: t0.Add(10 * time.Minute)}).ID
	e.runOnce()
	as := e.notif.forTicket(id)
	if len(as) != 1 || as[0].Channel != "#it-desk" || !strings.HasPrefix(as[0].Text, "For the assignee (ticket #"+strconv.FormatInt(id, 10)+" has no assignee): #") {
		t.Fatalf("alerts %+v", as)
	}
}

// lossyDM sends every direct message but loses the answer of the first
// (a timeout after Slack got it).
type lossyDM struct {
	dmNotifier
	lost bool
}

func (n *lossyDM) DM(ctx context.Context, d DM) error {
	_ = n.dmNotifier.DM(ctx, d)
	if !n.lost {
		n.lost = true
		return errors.New("context deadline exceeded (the message was sent)")
	}
	return nil
}

// A firing whose dm: answer was lost is resumed after its lease, finds
// the message by its key (AlreadyDMed) and does not send it again.
func TestDMResumedNotSentTwice(t *testing.T) {
	n := &lossyDM{dmNotifier: dmNotifier{recNotifier: &recNotifier{}}}
	e := newEnv(t, nudgeRules)
	e.s.notifier = n
	ag := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Andy", Email: "andy@example.com", Active: true})
	e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "soon", Priority: 2, ResponderID: ag.ID, DueBy: t0.Add(20 * time.Minute)})
	e.runOnce()
	if got := len(n.list()); got != 1 {
		t.Fatalf("%d messages after the first cycle, want 1", got)
	}
	e.afterLeases(2)
	if got := len(n.list()); got != 1 {
		t.Errorf("%d messages after the firing resumed, want still 1", got)
	}
}
