package slackchat_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot"

	"github.com/deskbot/deskbot/bot/slackchat"
	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
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
	b.ReportMetric(percentile(all.acks, 0.99).Seconds()*1000, "ack-p99-ms")
	b.ReportMetric(float64(all.unanswered)/n, "unanswered")
	b.ReportMetric(float64(all.busy)/n, "answered-busy")
	b.ReportMetric(float64(all.ok)/n, "answered-ok")
	b.ReportMetric(float64(all.failed)/n, "answered-failed")
	b.ReportMetric(float64(all.extra)/n, "answered-twice")
	b.ReportMetric(percentile(all.answers, 0.99).Seconds(), "answer-p99-s")
	b.ReportMetric(percentile(all.answers, 1).Seconds(), "answer-max-s")
	b.ReportMetric(percentile(all.busyAt, 0.99).Seconds(), "busy-answer-p99-s")
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
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
