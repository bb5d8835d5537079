package main

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// deskDownRules alert on every urgent unassigned ticket, every second.
const deskDownRules = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: alert-urgent
    query: "priority:4 AND agent_id:0"
    every: 1s
    actions:
      - alert: {channel: desk, text: "urgent #{{ ticket.id }}"}
`

// serveDeskAt serves desk on addr (the address deskbot was told, where
// nothing listened so far) until the test ends.
func serveDeskAt(t *testing.T, addr string, desk *sdsim.Desk) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the desk cannot listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: desk.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		desk.Close()
		_ = srv.Close()
	})
}

// pollReadyz reads /readyz until its status is want, and returns its body.
func pollReadyz(t *testing.T, addr string, want int, timeout time.Duration) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "(not listening)"
	for {
		if resp, err := c.Get("http://" + addr + "/readyz"); err == nil {
			var b strings.Builder
			_, _ = fmt.Fprint(&b, resp.Status, " ")
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			resp.Body.Close()
			b.Write(buf[:n])
			last = b.String()
			if resp.StatusCode == want {
				return string(buf[:n])
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not answer %d within %s; last: %s", want, timeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A desk that is down when deskbot starts: deskbot starts anyway, /readyz
// answers 503 and says why, since when and when it tries next, a command
// that needs the desk is told the desk is unreachable, and once the desk
// answers (the simulator started later on the same address) the rules
// start and fire, and /readyz turns 200. The outage is logged once, not
// per attempt.
func TestStartsWhileTheDeskIsDown(t *testing.T) {
	deskAddr, httpAddr := freeAddr(t), freeAddr(t)
	env, _ := deskOn(t, "http://"+deskAddr, deskDownRules, "DESKBOT_HTTP_ADDR", httpAddr)
	p := start(t, env)
	waitFor(t, "the start-up warning", p.stderr, regexp.MustCompile(`the desk does not answer: deskbot starts without it and retries`), 30*time.Second)

	body := pollReadyz(t, httpAddr, http.StatusServiceUnavailable, 30*time.Second)
	if !regexp.MustCompile(`"desk":"unreachable since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(cannot reach the desk at .*connection refused.*\); next try at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).MatchString(body) {
		t.Errorf("/readyz while the desk is down = %s; want the desk unreachable, since when, why and the next try", body)
	}

	fmt.Fprintln(p.stdin, "/ticket show 1")
	waitFor(t, "the answer to a command while the desk is down", p.stdout, regexp.MustCompile(`the desk is unreachable \(connection refused`), 30*time.Second)
	if p.wait0() {
		t.Fatal("deskbot stopped while the desk was down")
	}

	desk := sdsim.New()
	tk := desk.AddTicket(sdsim.Ticket{Subject: "Mail down", Priority: 4})
	serveDeskAt(t, deskAddr, desk)
	waitFor(t, "the desk seen up", p.stderr, regexp.MustCompile(`the desk answers now: starting what waited for it`), 60*time.Second)
	waitFor(t, "the rule's alert", p.stdout, regexp.MustCompile(fmt.Sprintf(`ALERT #it-desk: urgent #%d`, tk.ID)), 60*time.Second)
	body = pollReadyz(t, httpAddr, http.StatusOK, 60*time.Second)
	if !strings.Contains(body, `"desk":"ok"`) {
		t.Errorf("/readyz once the desk is up = %s", body)
	}
	if n := strings.Count(p.stderr.String(), "the desk does not answer"); n != 1 {
		t.Errorf("the outage was logged %d times, want once (not per attempt)", n)
	}

	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}

// A desk that is down at start and then answers by refusing the API key
// stops deskbot with one clear line, as a refusal at start does.
func TestDeskThatComesUpRefusingTheKeyStops(t *testing.T) {
	deskAddr := freeAddr(t)
	env, _ := deskOn(t, "http://"+deskAddr, deskDownRules, "DESKBOT_DESK_API_KEY", "not-the-key-4711")
	p := start(t, env)
	waitFor(t, "the start-up warning", p.stderr, regexp.MustCompile(`the desk does not answer: deskbot starts without it and retries`), 30*time.Second)
	serveDeskAt(t, deskAddr, sdsim.New())
	if code := p.wait(60 * time.Second); code != 1 {
		t.Fatalf("exit code %d once the desk refused the key, want 1", code)
	}
	out := p.stderr.String()
	if n := strings.Count(out, "the desk rejected the API key (DESKBOT_DESK_API_KEY)"); n != 1 {
		t.Errorf("the refusal is said %d times, want once:\n%s", n, out)
	}
	if strings.Contains(out+p.stdout.String(), "not-the-key-4711") {
		t.Error("the API key appears in the output")
	}
}

// wait0 reports whether the process has already exited.
func (p *proc) wait0() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
