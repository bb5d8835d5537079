package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// Every command's --help goes to stdout with exit 0, so that
// `deskbot sim --help | less` shows it; a wrong command or flag goes to
// stderr with a non-zero exit and says what was wrong.
func TestHelpAndUsageErrors(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		stdout     string // must contain
		stderr     string // must contain ("" : must be empty)
		stderrLast string // the last line of stderr
	}{
		{args: []string{"--help"}, stdout: "deskbot rules check FILE"},
		{args: []string{"run", "--help"}, stdout: "DESKBOT_WORKSPACE_IDS"},
		{args: []string{"run", "-h"}, stdout: "DESKBOT_LOG_FORMAT         text or json"},
		{args: []string{"rules", "--help"}, stdout: "deskbot rules why FILE --ticket N"},
		{args: []string{"rules", "check", "--help"}, stdout: "-custom-field"},
		{args: []string{"rules", "test", "--help"}, stdout: "-tickets"},
		{args: []string{"rules", "why", "-help"}, stdout: "-ticket"},
		{args: []string{"rules", "plan", "--help"}, stdout: "Usage: deskbot rules plan [FILE]"},
		{args: []string{"help"}, stdout: "deskbot rules plan [FILE]"},
		{args: []string{"sim", "--help"}, stdout: "-addr"},
		{args: []string{"version"}, stdout: "deskbot dev"},
		{args: []string{"bogus"}, code: 1, stderr: "Usage:", stderrLast: `deskbot: unknown command "bogus"`},
		{args: []string{"run", "--bogus"}, code: 1, stderr: "Usage: deskbot [run]", stderrLast: "deskbot: run: flag provided but not defined: -bogus"},
		{args: []string{"sim", "--tickets", "many"}, code: 1, stderr: "-tickets", stderrLast: `deskbot: sim: invalid value "many" for flag -tickets: parse error`},
		{args: []string{"sim", "--tickets", "100000000"}, code: 1, stderr: "Usage: deskbot sim", stderrLast: "deskbot: sim: --tickets must be between 0 and 100000, got 100000000"},
		{args: []string{"sim", "--rate", "-5"}, code: 1, stderr: "Usage: deskbot sim", stderrLast: "deskbot: sim: --rate must not be negative (0: unlimited), got -5"},
		{args: []string{"sim", "--search-page-cap", "-1"}, code: 1, stderr: "Usage: deskbot sim", stderrLast: "deskbot: sim: --search-page-cap must not be negative (0: no cap), got -1"},
		{args: []string{"rules", "plan", "a.yaml", "b.yaml"}, code: 1, stderr: "Usage: deskbot rules plan [FILE]", stderrLast: `deskbot: rules plan: unexpected argument "b.yaml"`},
		{args: []string{"rules", "frobnicate"}, code: 1, stderr: "Usage:", stderrLast: `deskbot: rules: unknown subcommand "frobnicate"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p := start(t, nil, tc.args...)
			p.stdin.Close()
			if code := p.wait(30 * time.Second); code != tc.code {
				t.Fatalf("exit %d, want %d", code, tc.code)
			}
			stdout, stderr := p.stdout.String(), p.stderr.String()
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tc.stdout)
			}
			if tc.stderr == "" && stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if last := lines[len(lines)-1]; tc.stderrLast != "" && last != tc.stderrLast {
				t.Errorf("last stderr line = %q, want %q", last, tc.stderrLast)
			}
		})
	}
}

// A SQLite state path that cannot work stops start-up with one line naming
// DESKBOT_STATE and the reason, before the desk is even contacted.
func TestStatePathProblemsAreOneClearLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ state, want string }{
		{dir, "DESKBOT_STATE: " + dir + " is a directory; want a database file such as " + filepath.Join(dir, "deskbot.db")},
		{filepath.Join(dir, "missing", "x.db"), "DESKBOT_STATE: the directory " + filepath.Join(dir, "missing") + " of " + filepath.Join(dir, "missing", "x.db") + " does not exist"},
		{"sqlite:" + filepath.Join(file, "x.db"), "DESKBOT_STATE: " + file + " is not a directory"},
		{"mysql://db/x", `DESKBOT_STATE: open state store: unsupported scheme "mysql"`},
	}
	for _, tc := range tests {
		t.Run(tc.state, func(t *testing.T) {
			p := start(t, map[string]string{"DESKBOT_STATE": tc.state})
			if code := p.wait(60 * time.Second); code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "deskbot: "+tc.want) {
				t.Fatalf("last line %q, want prefix %q", last, "deskbot: "+tc.want)
			}
		})
	}
}

// With DESKBOT_LOG_FORMAT=json a start-up failure is a JSON event too, at
// level ERROR, so a log pipeline that alerts on errors sees it.
func TestStartupFailureIsJSONWithJSONLogs(t *testing.T) {
	sim := sdsim.NewServer()
	defer sim.Close()
	p := start(t, map[string]string{
		"DESKBOT_DESK_URL": sim.URL, "DESKBOT_DESK_API_KEY": "not-the-key-4711",
		"DESKBOT_LOG_FORMAT": "json", "DESKBOT_LOG_LEVEL": "debug",
	})
	if code := p.wait(30 * time.Second); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	var last map[string]any
	for _, l := range lines {
		last = nil
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("stderr line is not JSON: %q", l)
		}
	}
	if last["level"] != "ERROR" || !strings.Contains(fmt.Sprint(last["err"]), "the desk rejected the API key") {
		t.Fatalf("last event = %v", last)
	}
	if strings.Contains(p.stderr.String()+p.stdout.String(), "not-the-key-4711") {
		t.Fatal("the API key appears in the output")
	}
}

// Issue 23, 9: a malformed variable is the only line start-up prints:
// nothing is logged (no INFO about the embedded desk, no WARN about the
// state it keeps) before every variable has been checked.
func TestBadVariableIsTheOnlyLine(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DESKBOT_STATE": "mysql://x/y"}, `deskbot: DESKBOT_STATE: open state store: unsupported scheme "mysql"`},
		{map[string]string{"DESKBOT_STATE": filepath.Join(dir, "s.db") + "?_txlock=deferred"}, "deskbot: DESKBOT_STATE: open sqlite state store: DSN sets _txlock=deferred"},
		{map[string]string{"DESKBOT_RULES": filepath.Join(dir, "none.yaml")}, "deskbot: DESKBOT_RULES: stat " + filepath.Join(dir, "none.yaml") + ": no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			p := start(t, tc.env)
			if code := p.wait(60 * time.Second); code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			got := strings.TrimSpace(p.stderr.String())
			if strings.Contains(got, "\n") || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("stderr:\n%s\nwant one line starting %q", got, tc.want)
			}
		})
	}
}

// Issue 23, 14: deskbot sim limits requests like the embedded simulator
// (the smallest plan's 100 a minute) unless --rate says otherwise; 0 is
// unlimited.
func TestSimLimitsLikeTheEmbeddedDesk(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		total string // X-Ratelimit-Total; "" none
		said  string
	}{
		{nil, "100", "5 tickets, 100 requests a minute"},
		{[]string{"--rate", "250"}, "250", "5 tickets, 250 requests a minute"},
		{[]string{"--rate", "0"}, "", "5 tickets, no rate limit"},
		{[]string{"--rate", "0", "--search-page-cap", "10"}, "", "5 tickets, no rate limit, search pages past 10 refused"},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			p := start(t, nil, append([]string{"sim", "--addr", "127.0.0.1:0", "--tickets", "5"}, tc.args...)...)
			var url string
			for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if _, rest, ok := strings.Cut(p.stdout.String(), "desk simulator on "); ok {
					url, _, _ = strings.Cut(rest, " ")
				}
			}
			if url == "" || !strings.Contains(p.stdout.String(), tc.said) {
				t.Fatalf("stdout %q, want the address and %q", p.stdout.String(), tc.said)
			}
			req, _ := http.NewRequest(http.MethodGet, url+"/api/v2/tickets/filter?query=%22priority:4%22", nil)
			req.SetBasicAuth(sdsim.DefaultAPIKey, "X")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("X-Ratelimit-Total"); resp.StatusCode != http.StatusOK || got != tc.total {
				t.Errorf("%s: X-Ratelimit-Total %q, want %q", resp.Status, got, tc.total)
			}
		})
	}
}
