package slackchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/fakedesk"
	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/internal/benchstat"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/slack-go/slack"
)

// burstOpenFiles is the open-file limit BenchmarkSlashBurst runs under:
// the common default soft limit, which the unbounded bot exhausted.
const burstOpenFiles = 1024

// lowerOpenFiles sets the soft RLIMIT_NOFILE to n for the rest of the
// benchmark and restores it at cleanup; it skips when that is not
// permitted (or the hard limit is below n).
func lowerOpenFiles(b *testing.B, n uint64) {
	b.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		b.Skipf("cannot read the open-file limit: %v", err)
	}
	if old.Max < n {
		b.Skipf("the hard open-file limit is %d, below %d", old.Max, n)
	}
	lim := syscall.Rlimit{Cur: n, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Skipf("cannot lower the open-file limit to %d: %v", n, err)
	}
	b.Cleanup(func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			b.Errorf("restore the open-file limit: %v", err)
		}
	})
}

// burstResult is what one burst measured.
type burstResult struct {
	acks       []time.Duration // delivery to ack, per command
	answers    []time.Duration // delivery to answer, per answered command
	busyAt     []time.Duration // delivery to answer, per busy answer
	ok, busy   int
	failed     int // answered, but neither the card nor a busy answer
	unanswered int
	extra      int // answers beyond one per command
}

// BenchmarkSlashBurst sends 1,000 `/ticket show` commands at once through
// the fake Slack and the real slack-go client to the desk simulator over
// the real HTTP client, every desk response taking 2 s, at the default
// desk budget (60 requests a minute, its default reserve, the client's
// Interactive twin as cmd/deskbot wires it), under an open-file limit of
// 1,024. Goals: acks within 50 ms (p99), every command answered exactly
// once, every answer (a card or an honest "busy") within 5 s.
func BenchmarkSlashBurst(b *testing.B) {
	lowerOpenFiles(b, burstOpenFiles)
	const commands = 1000
	var all burstResult
	before := runtime.NumGoroutine()
	for range b.N {
		r := runBurst(b, commands)
		all.acks = append(all.acks, r.acks...)
		all.answers = append(all.answers, r.answers...)
		all.busyAt = append(all.busyAt, r.busyAt...)
		all.ok += r.ok
		all.busy += r.busy
		all.failed += r.failed
		all.unanswered += r.unanswered
		all.extra += r.extra
	}
	// Nothing of the burst outlives it: no server, connection or command.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		// Goroutines end without telling anyone: poll their count.
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		b.Errorf("%d goroutines left running after the burst (%d before):\n%s", n-before, before, buf[:runtime.Stack(buf, true)])
	}
	n := float64(b.N)
	b.ReportMetric(benchstat.Percentile(all.acks, 0.99).Seconds()*1000, "ack-p99-ms")
	b.ReportMetric(float64(all.unanswered)/n, "unanswered")
	b.ReportMetric(float64(all.busy)/n, "answered-busy")
	b.ReportMetric(float64(all.ok)/n, "answered-ok")
	b.ReportMetric(float64(all.failed)/n, "answered-failed")
	b.ReportMetric(float64(all.extra)/n, "answered-twice")
	b.ReportMetric(benchstat.Percentile(all.answers, 0.99).Seconds(), "answer-p99-s")
	b.ReportMetric(benchstat.Percentile(all.answers, 1).Seconds(), "answer-max-s")
	b.ReportMetric(benchstat.Percentile(all.busyAt, 0.99).Seconds(), "busy-answer-p99-s")
}

// runBurst builds a desk simulator, a desk client, a router and a Slack
// transport, fires n commands and waits for every answer (at most 50 s),
// then shuts everything down.
func runBurst(b *testing.B, n int) burstResult {
	b.StopTimer()
	sim := sdsim.NewServer()
	defer sim.Close()
	sim.Desk.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	carol := sim.Desk.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Printer on fire", Priority: 4, RequesterID: carol.ID})
	sim.Desk.SetLatency(2 * time.Second)

	deskHTTP := &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer deskHTTP.CloseIdleConnections()
	client, err := sdclient.New(sim.URL, sdsim.DefaultAPIKey, sdclient.WithRatePerMinute(60), sdclient.WithHTTPClient(deskHTTP))
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	router, err := bot.NewRouter(bot.NewDeskAdapter(client.Interactive()), log, bot.WithDeskBudget(60))
	if err != nil {
		b.Fatal(err)
	}
	fake := slackfake.New(slackfake.WithUsers(slackUsers()...))
	defer fake.Close()
	// The transport's own HTTP client, as cmd/deskbot runs it; Run closes
	// its idle connections when it returns.
	s, err := slackchat.New(router, log, fake.BotToken(), fake.AppToken(), slackchat.WithAPIURL(fake.APIURL()))
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Errorf("Run: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	if err := fake.WaitConnected(ctx, 1); err != nil {
		b.Fatal(err)
	}

	b.StartTimer()
	start := time.Now()
	envs := make([]*slackfake.Envelope, 0, n)
	for range n {
		env, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: fmt.Sprintf("show %d", tk.ID), UserID: "UALICE", ChannelID: "C0DESK"})
		if err != nil {
			b.Fatal(err)
		}
		envs = append(envs, env)
	}
	var res burstResult
	for _, env := range envs {
		ack, err := env.WaitAck(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res.acks = append(res.acks, ack.Latency)
	}
	// Wait until every command has an answer (on its response_url, or in
	// the chat.postEphemeral / DM fallback), or the time is up.
	answers := func() int {
		byEnv := map[string]bool{}
		for _, r := range fake.Responses() {
			byEnv[r.EnvelopeID] = true
		}
		return len(byEnv) + len(fallbacks(fake))
	}
	_ = fake.Wait(ctx, func() bool { return answers() >= n }) // the time being up is measured below
	b.StopTimer()
	sent := map[string]time.Time{}
	for _, env := range envs {
		sent[env.ID] = env.SentAt
	}
	seen := map[string]bool{}
	classify := func(text, blocks string, after time.Duration) {
		switch {
		case strings.HasPrefix(text, "busy:"):
			res.busy++
			res.busyAt = append(res.busyAt, after)
		case strings.Contains(blocks, "Printer on fire"):
			res.ok++
		default:
			res.failed++
			if res.failed <= 3 {
				b.Logf("failed answer: %s", text)
			}
		}
	}
	for _, r := range fake.Responses() {
		if seen[r.EnvelopeID] {
			res.extra++
			continue
		}
		seen[r.EnvelopeID] = true
		after := r.At.Sub(sent[r.EnvelopeID])
		res.answers = append(res.answers, after)
		classify(r.Text, string(r.Blocks), after)
	}
	for _, m := range fallbacks(fake) {
		// A fallback names no envelope: measured from the first command.
		res.answers = append(res.answers, m.At.Sub(start))
		classify(m.Text, string(m.Blocks), m.At.Sub(start))
	}
	res.unanswered = max(0, n-len(seen)-len(fallbacks(fake)))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		b.Logf("gave up waiting: %d of %d commands unanswered after 50 s", res.unanswered, n)
	}
	return res
}

// fallbacks are the answers sent without a response_url: chat.postEphemeral
// in the channel, or a DM.
func fallbacks(fake *slackfake.Server) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range fake.Messages() {
		if m.Method == "chat.postEphemeral" || (m.Method == "chat.postMessage" && m.Channel != oncallID) {
			out = append(out, m)
		}
	}
	return out
}

var busyRE = regexp.MustCompile(`^busy: (\d+ commands? ahead of you|this minute's desk budget)[^,]*, try again in about \d+ s$`)

// showBurst sends n /ticket show 42 of alice at once and waits until each
// has an answer.
func showBurst(t *testing.T, h *e2e, n int) ([]*slackfake.Envelope, map[string][]slackfake.Response) {
	t.Helper()
	var envs []*slackfake.Envelope
	for range n {
		env, err := h.fake.SlashCommand(h.ctx, slackfake.SlashCommand{Command: "/ticket", Text: "show 42", UserID: "UALICE", ChannelID: "C0DESK"})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	return envs, answersByEnvelope(t, h.ctx, h.fake, envs)
}

// answersByEnvelope waits until every envelope has an answer on its
// response_url and returns them.
func answersByEnvelope(t *testing.T, ctx context.Context, fake *slackfake.Server, envs []*slackfake.Envelope) map[string][]slackfake.Response {
	t.Helper()
	var got map[string][]slackfake.Response
	n := 0
	err := fake.Wait(ctx, func() bool {
		got = map[string][]slackfake.Response{}
		for _, r := range fake.Responses() {
			got[r.EnvelopeID] = append(got[r.EnvelopeID], r)
		}
		n = 0
		for _, e := range envs {
			if len(got[e.ID]) > 0 {
				n++
			}
		}
		return n == len(envs)
	})
	if err != nil {
		t.Fatalf("%d of %d commands answered: %v", n, len(envs), err)
	}
	return got
}

// A burst at a small desk budget: the commands the budget pays for are
// answered with the card, every other one at once with an honest busy
// answer, each exactly once; help does not need the desk and is answered
// whatever the budget.
func TestSlackBurstAtBudget(t *testing.T) {
	d := fakedesk.New()
	d.Delay = 200 * time.Millisecond
	h := newE2E(t, d, []bot.Option{bot.WithDeskBudget(12)})
	start := time.Now()
	envs, got := showBurst(t, h, 10)
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
	// Exactly one answer each: a second answer would come within a moment,
	// so real time is let pass before counting (waiting for an absence).
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
	w := 20 // the workers at the default desk budget (bot/gate.go)
	envs, got := showBurst(t, h, 2*w+10)
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
	h := newE2E(t, nil, []bot.Option{bot.WithDeskBudget(3)})
	// The warm-up's one credit leaves less than a command's three.
	for h.fdesk.Count("statuses") == 0 {
		select {
		case <-h.ctx.Done():
			t.Fatal("no warm-up")
		case <-time.After(5 * time.Millisecond):
		}
	}
	sub, err := h.fake.ViewSubmission(h.ctx, "UCAROL", slackchat.FormCallbackID, "", map[string]map[string]string{slackchat.FormSubject: {slackchat.FormSubject: "Keyboard"}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := sub.WaitAck(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var resp slack.ViewSubmissionResponse
	if err := json.Unmarshal(ack.Payload, &resp); err != nil || resp.ResponseAction != "errors" || !busyRE.MatchString(resp.Errors[slackchat.FormSubject]) {
		t.Fatalf("ack %s (%v)", ack.Payload, err)
	}
	if n := h.fdesk.Count("create"); n != 0 {
		t.Fatalf("%d tickets created while busy", n)
	}
}
