package bot

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/slack-go/slack"

	"github.com/deskbot/deskbot/bot/slackfake"
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

var busyRE = regexp.MustCompile(`^busy: (\d+ commands? ahead of you|this minute's desk budget)[^,]*, try again in about \d+ s$`)

// The budget check: at 60 credits a minute and 3 a command, 20 commands
// are admitted; the 21st is told to come back when the window rolls.
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

// answersByEnvelope waits until every envelope has an answer on its
// response_url and returns them.
func answersByEnvelope(t *testing.T, ctx context.Context, fake *slackfake.Server, envs []*slackfake.Envelope) map[string][]slackfake.Response {
	t.Helper()
	for {
		got := map[string][]slackfake.Response{}
		for _, r := range fake.Responses() {
			got[r.EnvelopeID] = append(got[r.EnvelopeID], r)
		}
		n := 0
		for _, e := range envs {
			if len(got[e.ID]) > 0 {
				n++
			}
		}
		if n == len(envs) {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d commands answered", n, len(envs))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A burst at a small desk budget: the commands the budget pays for are
// answered with the card, every other one at once with an honest busy
// answer, each exactly once; help does not need the desk and is answered
// whatever the budget.
func TestSlackBurstAtBudget(t *testing.T) {
	d := fakedesk.New()
	d.Delay = 200 * time.Millisecond
	h := newE2E(t, d, []Option{WithDeskBudget(12)})
	var envs []*slackfake.Envelope
	start := time.Now()
	for range 10 {
		env, err := h.fake.SlashCommand(h.ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 42", UserID: "UALICE", ChannelID: "C0DESK"})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	got := answersByEnvelope(t, h.ctx, h.fake, envs)
	ok, busy := 0, 0
	for _, e := range envs {
		rs := got[e.ID]
		switch {
		case strings.Contains(all(rs[0]), "Printer on fire"):
			ok++
		case busyRE.MatchString(rs[0].Text):
			busy++
			if !strings.Contains(rs[0].Text, "desk budget (12 requests a minute)") {
				t.Errorf("busy answer %q does not say the budget is spent", rs[0].Text)
			}
			if at := rs[0].At.Sub(e.SentAt); at > time.Second {
				t.Errorf("busy answer after %s, want at once", at)
			}
		default:
			t.Errorf("answer %q", rs[0].Text)
		}
	}
	if ok < 3 || ok+busy != len(envs) {
		t.Fatalf("%d cards, %d busy of %d commands", ok, busy, len(envs))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the burst took %s", d)
	}
	if r := h.slash("UALICE", "/ticket", "help"); !strings.Contains(r.Text, "/ticket show") {
		t.Errorf("help while busy: %q", r.Text)
	}
	// Exactly one answer each.
	time.Sleep(100 * time.Millisecond)
	for _, e := range envs {
		n := 0
		for _, r := range h.fake.Responses() {
			if r.EnvelopeID == e.ID {
				n++
			}
		}
		if n != 1 {
			t.Errorf("envelope %s answered %d times", e.ID, n)
		}
	}
}

// A burst beyond the workers and the queue, desk budget unchecked: W
// commands run, W wait their turn, the rest are answered busy at once.
func TestSlackBurstBeyondWorkers(t *testing.T) {
	d := fakedesk.New()
	d.Delay = 500 * time.Millisecond
	h := newE2E(t, d, nil)
	w := h.slack.router.gate.workers
	var envs []*slackfake.Envelope
	for range 2*w + 10 {
		env, err := h.fake.SlashCommand(h.ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 42", UserID: "UALICE", ChannelID: "C0DESK"})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	got := answersByEnvelope(t, h.ctx, h.fake, envs)
	ok, busy := 0, 0
	for _, e := range envs {
		rs := got[e.ID]
		if len(rs) != 1 {
			t.Errorf("envelope answered %d times", len(rs))
		}
		switch r := rs[0]; {
		case strings.Contains(all(r), "Printer on fire"):
			ok++
		case busyRE.MatchString(r.Text) && strings.Contains(r.Text, "commands ahead of you, try again"):
			busy++
		default:
			t.Errorf("answer %q", r.Text)
		}
	}
	// Timing decides how many of the queued made it; the workers' share
	// always does, and nothing is lost.
	if ok < w || busy < 10 || ok+busy != len(envs) {
		t.Fatalf("%d cards, %d busy of %d (workers %d)", ok, busy, len(envs), w)
	}
}

// A new-ticket form submitted while the budget is spent stays open, with
// the busy answer under its subject: nothing typed is lost.
func TestSlackFormSubmitWhenBusy(t *testing.T) {
	h := newE2E(t, nil, []Option{WithDeskBudget(3)})
	// The warm-up's one credit leaves less than a command's three.
	for h.slack.router.meter.used(time.Now()) == 0 {
		select {
		case <-h.ctx.Done():
			t.Fatal("no warm-up")
		case <-time.After(5 * time.Millisecond):
		}
	}
	sub, err := h.fake.ViewSubmission(h.ctx, "UCAROL", formCallbackID, "", map[string]map[string]string{formSubject: {formSubject: "Keyboard"}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := sub.WaitAck(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp slack.ViewSubmissionResponse
	if err := json.Unmarshal(ack.Payload, &resp); err != nil || resp.ResponseAction != "errors" || !busyRE.MatchString(resp.Errors[formSubject]) {
		t.Fatalf("ack %s (%v)", ack.Payload, err)
	}
	if n := h.fdesk.Count("create"); n != 0 {
		t.Fatalf("%d tickets created while busy", n)
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
				time.Sleep(time.Millisecond)
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
