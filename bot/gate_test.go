package bot

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWorkersFor(t *testing.T) {
	for _, tc := range []struct{ budget, want int }{
		{0, 20}, {60, 20}, {100, 34}, {200, 64}, {500, 64}, {1, 2}, {3, 2}, {6, 2}, {12, 4},
	} {
		if got := workersFor(tc.budget); got != tc.want {
			t.Errorf("workersFor(%d) = %d, want %d", tc.budget, got, tc.want)
		}
	}
}

// The budget check: at 60 credits a minute and 3 a command, 20 commands
// are admitted; the 21st is told to come back when the window rolls.
var busyRE = regexp.MustCompile(`^busy: (\d+ commands? ahead of you|this minute's desk budget)[^,]*, try again in about \d+ s$`)

func TestGateBudget(t *testing.T) {
	m := &deskMeter{}
	g := newGate(60, m, time.Now)
	var passes []*Admission
	for i := range 20 {
		p, busy := g.enter()
		if p == nil {
			t.Fatalf("command %d refused: %s", i, busy)
		}
		passes = append(passes, p)
	}
	p, busy := g.enter()
	if p != nil || !busyRE.MatchString(busy) || !strings.Contains(busy, "20 commands ahead of you used this minute's desk budget (60 requests a minute)") || !strings.HasSuffix(busy, "about 60 s") {
		t.Fatalf("21st command: %v %q", p, busy)
	}
	// The commands spend their credits and finish: the window holds them
	// for a minute.
	for _, p := range passes {
		m.record(time.Now(), 3)
		p.acct.credits.Add(3)
		p.Done()
	}
	if p, busy := g.enter(); p != nil || !strings.Contains(busy, "about 60 s") {
		t.Fatalf("after the budget was spent: %v %q", p, busy)
	}
	// Cheaper than estimated: what a running command did not spend of its
	// estimate stays booked until it finishes.
	g2 := newGate(12, &deskMeter{}, time.Now)
	a, _ := g2.enter()
	b, _ := g2.enter()
	c, _ := g2.enter()
	if a == nil || b == nil || c == nil {
		t.Fatal("first three refused")
	}
	if p, _ := g2.enter(); p == nil {
		t.Fatal("fourth refused with 12 of 12 credits booked")
	}
	if p, _ := g2.enter(); p != nil {
		t.Fatal("fifth admitted beyond the budget")
	}
}

// Without a budget the workers and the queue bound a burst: W run, W wait,
// the rest are told how many are ahead; a queued command starts when a
// worker frees, and one that waits beyond the horizon is answered busy.
func TestGateWorkersAndQueue(t *testing.T) {
	g := newGate(0, nil, time.Now)
	var running, queued []*Admission
	for range g.workers {
		p, _ := g.enter()
		running = append(running, p)
	}
	for range g.queueCap {
		p, busy := g.enter()
		if p == nil {
			t.Fatalf("queue refused: %s", busy)
		}
		queued = append(queued, p)
	}
	p, busy := g.enter()
	if p != nil || busy != "busy: 40 commands ahead of you, try again in about 2 s" {
		t.Fatalf("beyond the queue: %v %q", p, busy)
	}
	select {
	case <-queued[0].start:
		t.Fatal("queued command started with every worker busy")
	default:
	}
	running[0].Done()
	if ok, busy := queued[0].Wait(); !ok {
		t.Fatalf("queued command did not start when a worker freed: %s", busy)
	}
	// The horizon: the others wait in vain.
	g.horizon = 50 * time.Millisecond
	ok, busy := queued[1].Wait()
	if ok || !busyRE.MatchString(busy) {
		t.Fatalf("expired queued command: %v %q", ok, busy)
	}
	queued[1].Done() // a no-op after expiry
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != g.workers || len(g.queue) != g.queueCap-2 {
		t.Fatalf("running %d, queued %d", g.running, len(g.queue))
	}
}

// Concurrent admissions and completions keep the books straight.
func TestGateConcurrent(t *testing.T) {
	g := newGate(0, nil, time.Now)
	g.horizon = time.Second
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			p, _ := g.enter()
			if p == nil {
				return
			}
			defer p.Done()
			if ok, _ := p.Wait(); ok {
				time.Sleep(time.Millisecond) // a command's work: real time passes while it holds its place
			}
		})
	}
	wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 0 || len(g.queue) != 0 || len(g.live) != 0 {
		t.Fatalf("running %d, queued %d, live %d after the burst", g.running, len(g.queue), len(g.live))
	}
}
