package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/slackfake"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// These tests build the real binary once and run it as a user would: as a
// process with an environment, stdin, stdout, stderr and signals.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func deskbotBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deskbot-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "deskbot")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is a running deskbot.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

// syncBuffer is a bytes.Buffer safe to read while the process writes, that
// tells waiters of every write.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed by the next write; nil until asked for
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// snapshot returns what was written so far and a channel closed by the
// next write.
func (s *syncBuffer) snapshot() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.b.String(), s.changed
}

// start runs the binary in a fresh working directory with exactly env (plus
// PATH and HOME), so nothing of the developer's environment leaks in.
func start(t *testing.T, env map[string]string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(deskbotBinary(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if _, ok := env["DESKBOT_HTTP_ADDR"]; !ok {
		cmd.Env = append(cmd.Env, "DESKBOT_HTTP_ADDR=127.0.0.1:0")
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &proc{t: t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() || os.Getenv("DESKBOT_TEST_SHOW_OUTPUT") != "" {
			t.Logf("stdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		}
	})
	return p
}

// deskOn is the environment of a deskbot on the desk at deskURL (with the
// simulator's API key), running rules (written to rules.yaml in a new
// directory) with its SQLite state next to them, plus the extra variables,
// given as name, value pairs (which may replace DESKBOT_STATE). It returns
// the directory too.
func deskOn(t *testing.T, deskURL, rules string, extra ...string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{
		"DESKBOT_DESK_URL": deskURL, "DESKBOT_DESK_API_KEY": sdsim.DefaultAPIKey,
		"DESKBOT_RULES": filepath.Join(dir, "rules.yaml"), "DESKBOT_STATE": filepath.Join(dir, "state.db"),
	}
	if err := os.WriteFile(env["DESKBOT_RULES"], []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return env, dir
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("deskbot did not exit within %s", timeout)
	}
	if p.err == nil {
		return 0
	}
	if ee, ok := p.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	p.t.Fatalf("wait: %v", p.err)
	return -1
}

// waitFor waits until out matches re (checking at every write), and
// returns the first submatch.
func waitFor(t *testing.T, what string, out *syncBuffer, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		text, changed := out.snapshot()
		if m := re.FindStringSubmatch(text); m != nil {
			return m
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("no %s matching %q within %s", what, re, timeout)
			return nil
		}
	}
}

// pollMetrics reads http://addr/metrics until ok holds of its text, and
// returns that text; after timeout it fails t with the last text read. The
// deskbot under test is another process, which offers nothing to wait on
// but its endpoint: this polls it, every 20ms.
func pollMetrics(t testing.TB, addr string, timeout time.Duration, ok func(metrics string) bool) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		text := ""
		if resp, err := client.Get("http://" + addr + "/metrics"); err == nil { // not listening yet: retry
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			text = string(body)
		}
		if ok(text) {
			return text
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s/metrics did not show what the test waits for within %s; last read:\n%.3000s", addr, timeout, text)
			return ""
		}
	}
}

func TestEmbeddedDefaultOverPipe(t *testing.T) {
	p := start(t, nil)
	fmt.Fprintln(p.stdin, "/ticket new Printer on fire")
	fmt.Fprintln(p.stdin, "/ticket frobnicate")
	p.stdin.Close()
	if code := p.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit code %d, want 0 after stdin closed", code)
	}
	out := p.stdout.String()
	m := regexp.MustCompile(`#(\d+)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "Printer on fire") {
		t.Fatalf("no new ticket id in the answer:\n%s", out)
	}
	if !strings.Contains(strings.ToLower(out), "usage") {
		t.Fatalf("a wrong subcommand got no usage line:\n%s", out)
	}
	if !strings.Contains(p.stderr.String(), "embedded desk simulator") {
		t.Fatalf("start-up does not say it runs the embedded simulator:\n%s", p.stderr)
	}
}

func TestWrongAPIKeyStopsStartup(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	started := time.Now()
	p := start(t, map[string]string{"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": "not-the-key-4711"})
	if code := p.wait(30 * time.Second); code == 0 {
		t.Fatal("deskbot started with a wrong API key")
	}
	if !strings.Contains(p.stderr.String(), "the desk rejected the API key") {
		t.Fatalf("stderr does not say the key was rejected:\n%s", p.stderr)
	}
	if strings.Contains(p.stderr.String()+p.stdout.String(), "not-the-key-4711") {
		t.Fatal("the API key appears in the output")
	}
	if d := time.Since(started); d > 10*time.Second {
		t.Fatalf("a wrong key took %s to report: retried instead of stopping", d)
	}
	if n := len(sim.Desk.Requests()); n > 2 {
		t.Fatalf("%d requests for a wrong key; want the start-up check only", n)
	}
}

func TestMissingVariableIsOneClearLine(t *testing.T) {
	p := start(t, map[string]string{"DESKBOT_DESK_URL": "https://desk.example"})
	if code := p.wait(10 * time.Second); code == 0 {
		t.Fatal("started without an API key")
	}
	if got := strings.TrimSpace(p.stderr.String()); got != "deskbot: DESKBOT_DESK_API_KEY: required when DESKBOT_DESK_URL is set" {
		t.Fatalf("stderr = %q", got)
	}
}

func TestAPIKeyNeverInOutputAtDebug(t *testing.T) {
	const key = "sekrit-api-key-9f2c"
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 50), sdsim.WithAgentKey(key, sdsim.DefaultAgentID))
	defer sim.Close()
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(`version: 1
rules:
  - name: note-urgent
    query: "priority:4"
    every: 1s
    actions:
      - note: "seen {{ ticket.id }}"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, map[string]string{
		"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": key,
		"DESKBOT_LOG_LEVEL": "debug", "DESKBOT_RULES": rulesFile,
	})
	fmt.Fprintln(p.stdin, "/ticket show 1")
	fmt.Fprintln(p.stdin, "/ticket unassigned")
	waitFor(t, "a poll cycle", p.stderr, regexp.MustCompile(`(?i)cycle`), 30*time.Second)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	all := p.stdout.String() + p.stderr.String()
	if strings.Contains(all, key) {
		t.Fatal("the API key appears in the output at debug level")
	}
	if !strings.Contains(p.stderr.String(), "level=DEBUG") {
		t.Fatalf("no debug lines, so the test proves nothing:\n%s", p.stderr)
	}
}

func TestRulesCheckAndTestCommands(t *testing.T) {
	example, _ := filepath.Abs("../../rules.example.yaml")
	tickets, _ := filepath.Abs("../../rules/testdata/tickets.json")
	p := start(t, nil, "rules", "check", example)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("rules check of the example exited %d: %s", code, p.stderr)
	}
	if want := "rules.example.yaml: ok, 5 rules, 1 digest, on-call: 2 schedules and 1 policy\n"; !strings.HasSuffix(p.stdout.String(), want) {
		t.Errorf("rules check of the example said %q, want %q", p.stdout.String(), want)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nrules:\n  - name: x\n    query: \"status:\"\n    actions: [{note: hi}]\n"), 0o600)
	p = start(t, nil, "rules", "check", bad)
	if code := p.wait(30 * time.Second); code != 1 {
		t.Fatalf("rules check of a bad file exited %d, want 1", code)
	}
	if want := bad + `:4:20: rule "x": query:`; !strings.HasPrefix(p.stderr.String(), want) {
		t.Fatalf("stderr = %q, want prefix %q", p.stderr, want)
	}
	p = start(t, nil, "rules", "test", example, "--tickets", tickets, "--now", "2025-03-10T10:00:00Z")
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("rules test exited %d: %s", code, p.stderr)
	}
	if !strings.Contains(p.stdout.String(), "page-urgent-unassigned fires") {
		t.Fatalf("rules test plan lacks the urgent page:\n%s", p.stdout)
	}
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestSlackSimRulesReloadAndShutdown(t *testing.T) {
	sim := sdsim.NewServer(sdsim.WithGenerated(1, 60))
	defer sim.Close()
	slack := agentSlack(t, sim)

	httpAddr := freeAddr(t)
	vars, _ := deskOn(t, sim.URL, deskDownRules, "SLACK_BOT_TOKEN", slack.BotToken(), "SLACK_APP_TOKEN", slack.AppToken(),
		"DESKBOT_SLACK_API_URL", slack.APIURL(), "DESKBOT_HTTP_ADDR", httpAddr,
		"DESKBOT_LOG_LEVEL", "debug", "DESKBOT_LOG_FORMAT", "json")
	rulesFile := vars["DESKBOT_RULES"]
	p := start(t, vars)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := slack.WaitConnected(ctx, 1); err != nil {
		t.Fatalf("deskbot never connected to Slack: %v", err)
	}

	// A slash command round trip.
	env, err := slack.SlashCommand(ctx, slackfake.SlashCommand{Command: "/ticket", Text: "new Projector in room 4 is dead", UserID: "U0AGENT", ChannelID: "C0DESK"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.WaitAck(ctx); err != nil {
		t.Fatalf("no ack: %v", err)
	}
	resp, err := slack.WaitResponse(ctx, func(r slackfake.Response) bool { return strings.Contains(r.Text+string(r.Blocks), "Projector") })
	if err != nil {
		t.Fatalf("no answer to /ticket new: %v", err)
	}
	if !regexp.MustCompile(`#\d+`).MatchString(resp.Text + string(resp.Blocks)) {
		t.Fatalf("answer has no ticket id: %+v", resp)
	}

	// A rule firing an alert into the channel.
	if _, err := slack.WaitMessage(ctx, func(m slackfake.Message) bool {
		return m.Channel == "C0DESK" && strings.Contains(m.Text+string(m.Blocks), "urgent #")
	}); err != nil {
		t.Fatalf("the rule's alert never reached Slack: %v", err)
	}

	// Ready: desk, store, chat and rules all answer.
	if code, body := httpGetBody(t, "http://"+httpAddr+"/readyz"); code != 200 || !strings.Contains(body, `"chat":"ok"`) {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	// The alert goes out before its cycle is counted: poll until it is.
	pollMetrics(t, httpAddr, 20*time.Second, func(body string) bool {
		return strings.Contains(body, "deskbot_build_info") && strings.Contains(body, `deskbot_scheduler_cycles_total{job="alert-urgent",outcome="complete"}`) &&
			strings.Contains(body, "deskbot_desk_requests_total") && strings.Contains(body, "\ndeskbot_scheduler_leader 1\n")
	})

	// SIGHUP with a bad file keeps running and logs the positioned error.
	os.WriteFile(rulesFile, []byte("version: 1\nrules:\n  - name: alert-urgent\n    query: \"priority:\"\n    actions: [{note: x}]\n"), 0o600)
	_ = p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "reload error", p.stderr, regexp.MustCompile(`keeping the old rules.*rules\.yaml:4:`), 20*time.Second)
	select {
	case <-p.done:
		t.Fatal("deskbot exited after a bad reload")
	default:
	}
	if code := httpGet(t, "http://"+httpAddr+"/healthz"); code != 200 {
		t.Fatalf("/healthz = %d after a bad reload", code)
	}

	// SIGTERM: clean exit 0.
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	if !strings.Contains(p.stderr.String(), "stopped") {
		t.Fatalf("no clean stop logged:\n%s", p.stderr)
	}
	// DESKBOT_LOG_FORMAT=json: every log line is one JSON object; at debug
	// level no token appears anywhere.
	for _, line := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
	}
	for _, secret := range []string{slack.BotToken(), slack.AppToken(), sdsim.DefaultAPIKey} {
		if strings.Contains(p.stderr.String()+p.stdout.String(), secret) {
			t.Fatalf("secret %q appears in the output at debug level", secret)
		}
	}
}

func httpGet(t *testing.T, url string) int {
	t.Helper()
	code, _ := httpGetBody(t, url)
	return code
}

func httpGetBody(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// BenchmarkStartup measures what a new user waits for: from exec to a
// healthy /healthz on the embedded default (simulator seeded, console up),
// and the resident memory of the idle process.
func BenchmarkStartup(b *testing.B) {
	bin := deskbotBinary(b)
	var total time.Duration
	var rssKiB int64
	for b.Loop() {
		addr := freeAddrB(b)
		cmd := exec.Command(bin)
		cmd.Dir = b.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "DESKBOT_HTTP_ADDR=" + addr}
		stdin, _ := cmd.StdinPipe()
		begin := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		c := &http.Client{Timeout: time.Second}
		for {
			resp, err := c.Get("http://" + addr + "/healthz")
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Since(begin) > 30*time.Second {
				b.Fatal("deskbot never became healthy")
			}
			// Another process: nothing to wait on but its endpoint. A
			// fine poll, since the time to healthy is what is measured.
			time.Sleep(2 * time.Millisecond)
		}
		total += time.Since(begin)
		// Deliberately idle for a while: the memory measured is the idle
		// process's, after start-up's garbage is collected.
		time.Sleep(500 * time.Millisecond)
		rssKiB = max(rssKiB, vmRSS(cmd.Process.Pid))
		stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-healthy")
	b.ReportMetric(float64(rssKiB)/1024, "idle-rss-MiB")
}

func freeAddrB(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// vmRSS reads a process's resident set size in KiB from /proc (Linux).
func vmRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kib)
			return kib
		}
	}
	return 0
}

// TestOnCallPagesOnConsole runs the binary with an oncall: section and the
// console chat: the rule pages, /oncall answers, /oncall ack N stops the
// page and notes it on the ticket, /metrics shows it, and a reload with an
// unknown policy keeps the old rules.
func TestOnCallPagesOnConsole(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	tk := sim.Desk.AddTicket(sdsim.Ticket{Subject: "Core switch down", Priority: 4})
	httpAddr := freeAddr(t)
	oncallRules := readFile(t, "testdata/oncall_rules.yaml")
	env, _ := deskOn(t, sim.URL, oncallRules, "DESKBOT_HTTP_ADDR", httpAddr)
	rulesFile := env["DESKBOT_RULES"]
	p := start(t, env)
	waitFor(t, "the page on the console", p.stdout,
		regexp.MustCompile(fmt.Sprintf(`PAGE #it-oncall: paged alice@example.com \(on call in it-primary\) \(level 1 of it-urgent\): urgent #%d`, tk.ID)), 30*time.Second)

	fmt.Fprintln(p.stdin, "/oncall")
	waitFor(t, "/oncall", p.stdout, regexp.MustCompile(`it-primary: alice@example.com until \w{3} \d{4}-\d\d-\d\d 09:00 CES?T, then alice@example.com`), 20*time.Second)
	fmt.Fprintf(p.stdin, "/oncall ack %d\n", tk.ID)
	waitFor(t, "/oncall ack", p.stdout, regexp.MustCompile(fmt.Sprintf(`Acknowledged the page of ticket #%d \(it-urgent\)`, tk.ID)), 20*time.Second)
	var note string
	for _, c := range sim.Desk.Conversations(tk.ID) {
		if c.Private && strings.Contains(c.Body, "On-call page acknowledged by") {
			note = c.Body
		}
	}
	if note == "" {
		t.Fatalf("no acknowledgement note on ticket %d: %+v", tk.ID, sim.Desk.Conversations(tk.ID))
	}

	metrics := get(t, "http://"+httpAddr+"/metrics")
	for _, want := range []string{
		`deskbot_oncall_pages_total{policy="it-urgent"} 1`,
		`deskbot_oncall_acks_total{policy="it-urgent"} 1`,
		`deskbot_oncall_time_to_ack_seconds_count{policy="it-urgent"} 1`,
		`deskbot_oncall_on_call{member="alice@example.com",override="false",schedule="it-primary"} 1`,
		`deskbot_scheduler_pages_total{outcome="started",rule="page-urgent"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A reload naming an unknown policy keeps the old rules.
	bad := strings.Replace(oncallRules, "{policy: it-urgent,", "{policy: it-urgnet,", 1)
	if err := os.WriteFile(rulesFile, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, "reload error", p.stderr, regexp.MustCompile(`keeping the old rules.*rules\.yaml:21:24: rule \\?"page-urgent\\?": page: unknown escalation policy`), 20*time.Second)
	// The failed reload shows in /metrics and /readyz (degraded: the old
	// rules run on).
	if m := get(t, "http://"+httpAddr+"/metrics"); !strings.Contains(m, "\ndeskbot_rules_reload_failures_total 1\n") ||
		!strings.Contains(m, "\ndeskbot_rules_last_reload_success 0\n") {
		t.Errorf("/metrics does not show the failed reload")
	}
	if r := get(t, "http://"+httpAddr+"/readyz"); !regexp.MustCompile(`"rules":"degraded: last reload failed at \d\d:\d\d: [^"]*rules\.yaml:21:24: `).MatchString(r) {
		t.Errorf("/readyz = %s, want the rules check to say the last reload failed", r)
	}

	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}

// get returns the body of a GET of url.
func get(t *testing.T, url string) string {
	t.Helper()
	_, body := httpGetBody(t, url)
	return body
}

// readFile returns the text of the file at path, failing t.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
