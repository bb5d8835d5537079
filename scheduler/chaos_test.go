package scheduler

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// chaosRules' last rule routes a ticket: its first action takes the
// ticket out of the rule's query, and the firing must still finish.
var chaosRules = fmt.Sprintf(`version: 1
channels: {oncall: "#oncall"}
rules:
  - name: urgent
    query: "status:open AND agent_id:0 AND priority:4"
    every: 1m
    actions:
      - alert: {channel: oncall, text: "Urgent #{{ ticket.id }}"}
      - note: "Urgent and unassigned."
      - set: {tags: [paged]}
  - name: high
    query: "status:open AND priority:3"
    every: 1m
    actions:
      - reply: "We are looking at it."
  - name: remind
    query: "status:open AND agent_id:0"
    every: 1m
    once: every 5m
    actions:
      - note: "Still unassigned."
  - name: route
    query: "status:open AND agent_id:0 AND priority:2"
    every: 1m
    actions:
      - set: {responder_id: %d}
      - note: "Routed to the first line."
      - alert: {channel: oncall, text: "Routed #{{ ticket.id }}"}
`, sdsim.DefaultAgentID)

// chaosNotifier posts alerts like recNotifier but, when told, loses the
// answer of a posted alert (the chat took it, deskbot got an error) or
// refuses one outright.
type chaosNotifier struct {
	recNotifier
	mu          sync.Mutex
	lose, refus int
}

func (n *chaosNotifier) Alert(ctx context.Context, a Alert) error {
	n.mu.Lock()
	lose, refuse := n.lose > 0, n.refus > 0
	if lose {
		n.lose--
	} else if refuse {
		n.refus--
	}
	n.mu.Unlock()
	if refuse {
		return ErrNotDelivered
	}
	if err := n.recNotifier.Alert(ctx, a); err != nil {
		return err
	}
	if lose {
		return errors.New("chat: read response: connection reset")
	}
	return nil
}

var markerRE = regexp.MustCompile(`deskbot:f=[^ >]+`)

// TestChaosNeverTwiceNeverLost drives two replicas sharing one ledger
// through random ticket changes, desk faults (429s, 500s, dropped
// connections before and after the desk applied a request) and chat
// failures, running their cycles at the same time. Then the faults stop.
// Never twice: no note, reply or alert of one firing exists twice. Never
// lost: every ticket a rule matches at the end got that rule's actions for
// its current episode, exactly once.
//
// go test -run Chaos -chaos.seeds 50 ./scheduler runs more seeds.
func TestChaosNeverTwiceNeverLost(t *testing.T) {
	seeds, steps := *chaosSeeds, 60
	if seeds == 0 {
		seeds = 3
		if raceEnabled {
			seeds, steps = 1, 20
		}
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed ", seed+1), func(t *testing.T) { chaos(t, seed+1, steps) })
	}
}

var chaosSeeds = flag.Int("chaos.seeds", 0, "seeds of TestChaosNeverTwiceNeverLost (0: 3, or 1 under -race)")

func chaos(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 42))
	clk := clockwork.NewFakeClockAt(t0)
	sim := sdsim.NewServer(sdsim.WithClock(clk.Now))
	t.Cleanup(sim.Close)
	set := mustRules(t, chaosRules)
	notif := &chaosNotifier{}
	db := filepath.Join(t.TempDir(), "state.db")
	// One store for both: two connections to one SQLite file would spend
	// the test in SQLite's busy sleeps; PostgreSQL replicas have their own
	// tests. The replicas still race for every claim.
	st := openStore(t, db)
	var scheds []*Scheduler
	for range 2 {
		s, err := New(testLogger(t), ClientDesk(clientFor(t, sim)), set, st, notif, WithClock(clk), WithSingleton(false))
		if err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	var ids []int64
	add := func() {
		ids = append(ids, sim.Desk.AddTicket(sdsim.Ticket{Subject: "t", Priority: 1 + rng.IntN(4)}).ID)
	}
	for range 70 { // the agent_id:0 query spans three filter pages
		add()
	}
	mutate := func() {
		id := ids[rng.IntN(len(ids))]
		switch rng.IntN(6) {
		case 0:
			sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.ResponderID = sdsim.DefaultAgentID })
		case 1:
			sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.ResponderID = 0 })
		case 2:
			sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Priority = 1 + rng.IntN(4) })
		case 3:
			sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Status = 4 })
		case 4:
			sim.Desk.UpdateTicket(id, func(x *sdsim.Ticket) { x.Status = 2 })
		case 5:
			add()
		}
	}
	paths := []string{"", "/api/v2/tickets/filter", "/api/v2/tickets/"}
	methods := []string{"", "GET", "POST", "PUT"}
	kinds := []sdsim.FaultKind{sdsim.FaultServerError, sdsim.FaultDrop, sdsim.FaultDropAfter, sdsim.FaultRateLimit}
	runBoth := func() {
		var wg sync.WaitGroup
		for _, s := range scheds {
			wg.Go(func() {
				if _, err := s.RunOnce(t.Context()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	for range steps {
		for range rng.IntN(6) {
			mutate()
		}
		limited := false
		for range rng.IntN(3) {
			f := sdsim.Fault{Kind: kinds[rng.IntN(len(kinds))], Count: 1 + rng.IntN(3),
				Method: methods[rng.IntN(len(methods))], PathPrefix: paths[rng.IntN(len(paths))]}
			if f.Kind == sdsim.FaultRateLimit {
				// One 429 a step: the retry after it (an instant sleep
				// here) goes through. More could meet the retry too and
				// leave the client's pause running for a real second.
				if limited {
					continue
				}
				f.Count, limited = 1, true
			}
			sim.Desk.InjectFault(f)
		}
		notif.mu.Lock()
		notif.lose, notif.refus = rng.IntN(2), rng.IntN(2)
		notif.mu.Unlock()
		clk.Advance(time.Minute)
		runBoth()
	}

	// Calm: no faults, no changes; leases of crashed-looking firings run
	// out and every firing finishes.
	sim.Desk.ClearFaults()
	notif.mu.Lock()
	notif.lose, notif.refus = 0, 0
	notif.mu.Unlock()
	for range 8 {
		clk.Advance(time.Minute)
		runBoth()
	}
	// Firings whose actions were refused back off 1, 2, 4, ... minutes:
	// give the ones under way the time to finish.
	for range 90 {
		begun, err := st.BegunFirings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(begun) == 0 {
			break
		}
		clk.Advance(time.Minute)
		runBoth()
	}

	// Never twice.
	seen := map[string]int{}
	for _, id := range sim.Desk.TicketIDs() {
		for _, c := range sim.Desk.Conversations(id) {
			for _, m := range markerRE.FindAllString(c.Body, -1) {
				seen[m]++
			}
		}
	}
	for _, a := range notif.list() {
		seen[a.Key]++
	}
	for m, n := range seen {
		if n > 1 {
			t.Errorf("%s happened %d times", m, n)
		}
	}

	// Never lost: every rule that holds on a ticket now fired in the
	// ticket's current episode, with every action there once.
	client := clientFor(t, sim)
	now := clk.Now()
	fired := 0
	for _, id := range sim.Desk.TicketIDs() {
		tk, _, err := client.Tickets.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range set.Rules() {
			if len(set.EvaluateRule(r, []*sdclient.Ticket{tk}, now)) == 0 || r.Once.Mode != rules.OnceEpisode {
				continue
			}
			info, ok, err := st.FiringState(t.Context(), rules.FiringKey{Rule: r.Name, TicketID: id})
			if err != nil || !ok || !info.Open || info.State != rules.FiringDone {
				t.Errorf("rule %s holds on ticket %d but its firing is %+v (found %v, %v)", r.Name, id, info, ok, err)
				continue
			}
			fired++
			f := rules.Firing{Key: rules.FiringKey{Rule: r.Name, TicketID: id}, Episode: info.Episode, Seq: info.Seq}
			for i, kind := range r.ActionKinds() {
				if kind == rules.ActionUpdate {
					if r.Name == "urgent" && !strings.Contains(strings.Join(tk.Tags, ","), "paged") {
						t.Errorf("ticket %d: rule urgent fired but the tag is missing: %v", id, tk.Tags)
					}
					continue
				}
				if n := seen[Marker(f, i)]; n != 1 {
					t.Errorf("ticket %d: %s happened %d times, want once", id, Marker(f, i), n)
				}
			}
		}
	}
	if fired == 0 {
		t.Fatal("no rule holds on any ticket at the end: the test checks nothing")
	}

	// Never lost, for a firing whose first action took the ticket out of
	// its query: every route firing that left a trace (a note or an alert)
	// has both, once; every current route firing is done.
	routed := map[string][2]int{}
	for m, n := range seen {
		rest, ok := strings.CutPrefix(m, "deskbot:f=route/")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '/')
		c := routed[rest[:i]]
		switch rest[i+1:] {
		case "1":
			c[0] += n
		case "2":
			c[1] += n
		}
		routed[rest[:i]] = c
	}
	duplicates, lost := 0, 0
	for f, c := range routed {
		if c[0] > 1 || c[1] > 1 {
			duplicates++
		}
		if c[0] == 0 || c[1] == 0 {
			lost++
			t.Errorf("route firing %s: %d notes, %d alerts; want one of each", f, c[0], c[1])
		}
	}
	for _, id := range sim.Desk.TicketIDs() {
		info, ok, err := st.FiringState(t.Context(), rules.FiringKey{Rule: "route", TicketID: id})
		if err != nil {
			t.Fatal(err)
		}
		if ok && info.State != rules.FiringDone {
			lost++
			t.Errorf("ticket %d: route firing %+v still pending after the calm", id, info)
		}
	}
	if len(routed) == 0 {
		t.Error("no route firing happened: the test checks nothing of it")
	}
	t.Logf("seed %d: %d firings checked, %d route firings (%d duplicated, %d lost), %d markers, %d requests",
		seed, fired, len(routed), duplicates, lost, len(seen), len(sim.Desk.Requests()))
}
