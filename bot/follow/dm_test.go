package follow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/bot/chat"
	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// dmChat records direct messages and finds them by key.
type dmChat struct{ sent[chat.DMMessage] }

func (n *dmChat) DM(_ context.Context, m chat.DMMessage) error {
	n.add(m)
	return nil
}

func (n *dmChat) AlreadyDMed(_ context.Context, m chat.DMMessage) (bool, error) {
	return n.has(func(x chat.DMMessage) bool { return x.Key == m.Key }), nil
}

// withDMs plugs direct messages sent through n into a scheduler.
func withDMs(n chat.DMNotifier) func(e *env) []scheduler.Option {
	return func(*env) []scheduler.Option { return []scheduler.Option{scheduler.WithDMs(NewDMs(n))} }
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
	n := &dmChat{}
	e := newEnv(t, nudgeRules, withDMs(n))
	ag := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Andy", LastName: "Agent", Email: "andy@example.com", Active: true})
	soon := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "soon", Priority: 2, ResponderID: ag.ID, DueBy: t0.Add(20 * time.Minute)}).ID
	later := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "later", Priority: 2, ResponderID: ag.ID, DueBy: t0.Add(3 * time.Hour)}).ID
	orphan := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "orphan", Priority: 2, DueBy: t0.Add(10 * time.Minute)}).ID
	e.runOnce()
	before := deskReads(e.sim, "/api/v2/agents/")
	for range 3 {
		e.next()
	}
	dms := n.list()
	if len(dms) != 2 {
		t.Fatalf("sent %d direct messages, want 2: %+v", len(dms), dms)
	}
	byTicket := map[int64]chat.DMMessage{}
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
	if got := deskReads(e.sim, "/api/v2/agents/"); got != 1 || before != 1 {
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

// The requester of a ticket is found by the requesters' API, or, when the
// requester is an agent (an agent raised the ticket), by the agents'; one
// the desk does not know gets the message in the fallback channel.
func TestDMRequester(t *testing.T) {
	n := &dmChat{}
	e := newEnv(t, strings.ReplaceAll(nudgeRules, "to: assignee", "to: requester"), withDMs(n))
	rq := e.sim.Desk.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	ag := e.sim.Desk.AddAgent(sdsim.Agent{FirstName: "Andy", Email: "andy@example.com", Active: true})
	byRequester := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "a", Priority: 2, RequesterID: rq.ID, DueBy: t0.Add(10 * time.Minute)}).ID
	byAgent := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "b", Priority: 2, RequesterID: ag.ID, DueBy: t0.Add(10 * time.Minute)}).ID
	unknown := e.sim.Desk.AddTicket(sdsim.Ticket{Subject: "c", Priority: 2, RequesterID: 999999, DueBy: t0.Add(10 * time.Minute)}).ID
	e.runOnce()
	got := map[int64]string{}
	for _, d := range n.list() {
		got[d.Ticket.ID] = d.To + "|" + d.Who + "|" + d.Why
	}
	want := map[int64]string{
		byRequester: "carol@example.com|the requester Carol|",
		byAgent:     "andy@example.com|the requester Andy|",
		unknown:     "|the requester|the desk has no person 999999",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("direct messages %v; want %v", got, want)
	}
}

// lossyDM sends every direct message but loses the answer of the first
// (a timeout after Slack got it).
type lossyDM struct {
	dmChat
	lost bool
}

func (n *lossyDM) DM(ctx context.Context, m chat.DMMessage) error {
	_ = n.dmChat.DM(ctx, m)
	if !n.lost {
		n.lost = true
		return errors.New("context deadline exceeded (the message was sent)")
	}
	return nil
}

// A firing whose dm: answer was lost is resumed after its lease, finds
// the message by its key (AlreadyDMed) and does not send it again.
func TestDMResumedNotSentTwice(t *testing.T) {
	n := &lossyDM{}
	e := newEnv(t, nudgeRules, withDMs(n))
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

// BenchmarkDMNudges measures what dm: costs on the desk: 10,000 open
// tickets (assigned round-robin to 20 agents), 100 of them coming within
// 30 minutes of their due_by each minute. Per nudge the firing re-reads the
// ticket (as every firing does); the assignee's e-mail is one agent read
// per person per 10 minutes (the people cache), so at 100 nudges a minute
// the agent reads are at most 20 per 10 minutes.
func BenchmarkDMNudges(b *testing.B) {
	const tickets, perMinute, agents = 10000, 100, 20
	clk := clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	defer sim.Close()
	var ids []int64
	for i := range agents {
		ids = append(ids, sim.Desk.AddAgent(sdsim.Agent{FirstName: fmt.Sprintf("A%d", i), Email: fmt.Sprintf("a%d@example.com", i), Active: true}).ID)
	}
	for i := range tickets {
		// Ticket i comes within 30 minutes of its due_by in minute i/100.
		sim.Desk.AddTicket(sdsim.Ticket{Subject: fmt.Sprintf("t%d", i), Priority: 2, ResponderID: ids[i%agents],
			DueBy: t0.Add(30*time.Minute + time.Duration(i/perMinute+1)*time.Minute - time.Second)})
	}
	st := openStore(b, clk)
	n := &dmChat{}
	rules := strings.Replace(nudgeRules, "    query: status:open\n", "    query: status:open\n    max_firings_per_cycle: 1000\n", 1)
	s, err := scheduler.New(quiet, firing.ClientDesk(testkit.DeskClient(b, sim)), mustRules(b, rules), st, nil, scheduler.WithClock(clk),
		scheduler.WithRegistry(prometheus.NewRegistry()), scheduler.WithMaxFiringsPerCycle(1000), scheduler.WithDMs(NewDMs(n)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RunCycle(b.Context()); err != nil { // the first full sync
		b.Fatal(err)
	}
	sim.Desk.ResetRequests()
	sent0 := len(n.list())
	minutes := 0
	b.ResetTimer()
	for b.Loop() {
		clk.Advance(time.Minute)
		if _, err := s.RunCycle(b.Context()); err != nil {
			b.Fatal(err)
		}
		minutes++
	}
	b.StopTimer()
	var reads, people, other int
	for _, r := range sim.Desk.Requests() {
		switch {
		case strings.HasPrefix(r.Path, "/api/v2/agents/"):
			people++
		case r.Method == "GET" && strings.Count(r.Path, "/") == 4 && strings.HasPrefix(r.Path, "/api/v2/tickets/"):
			reads++
		default:
			other++
		}
	}
	dms := len(n.list()) - sent0
	if dms == 0 {
		b.Fatal("no nudge sent")
	}
	b.ReportMetric(float64(dms)/float64(minutes), "dms/minute")
	b.ReportMetric(float64(reads)/float64(dms), "re-reads/dm")
	b.ReportMetric(float64(people)*60/float64(minutes), "agent-reads/hour")
	b.ReportMetric(float64(people)/float64(dms), "agent-reads/dm")
	b.ReportMetric(float64(other)/float64(minutes), "sync-requests/minute")
}
