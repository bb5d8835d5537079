package main

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskbot/deskbot/internal/testkit"
)

func getWith(t *testing.T, url string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// TestStatusPagesAccess runs deskbot on the demo (embedded simulator and
// rules.example.yaml) and asks for its pages the way an operator would:
// on the default loopback address they are open and show the rules; on
// every address, asked from outside loopback, they are off without
// DESKBOT_UI_TOKEN and need it with one, while /healthz, /readyz and
// /metrics answer as before. The token never shows in the output.
func TestStatusPagesAccess(t *testing.T) {
	rules, err := filepath.Abs(filepath.Join("..", "..", "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("loopback", func(t *testing.T) {
		addr := freeAddr(t)
		start(t, map[string]string{"DESKBOT_RULES": rules, "DESKBOT_HTTP_ADDR": addr})
		pollMetrics(t, addr, 60*time.Second, func(m string) bool { return strings.Contains(m, "deskbot_mirror_tickets") })
		code, body := getWith(t, "http://"+addr+"/rules")
		if code != http.StatusOK || !strings.Contains(body, "page-urgent-unassigned") {
			t.Fatalf("/rules on loopback: %d %.300s", code, body)
		}
	})

	ip := testkit.NonLoopbackIPv4()
	if ip == "" {
		t.Skip("no non-loopback address on this machine to ask from")
	}
	const token = "ui-token-Kx9-never-logged"
	for _, tc := range []struct {
		name  string
		token string
	}{{"no token", ""}, {"token", token}} {
		t.Run(tc.name, func(t *testing.T) {
			_, port, _ := net.SplitHostPort(freeAddr(t))
			env := map[string]string{"DESKBOT_RULES": rules, "DESKBOT_HTTP_ADDR": "0.0.0.0:" + port, "DESKBOT_LOG_LEVEL": "debug"}
			if tc.token != "" {
				env["DESKBOT_UI_TOKEN"] = tc.token
			}
			p := start(t, env)
			outside := "http://" + net.JoinHostPort(ip, port)
			pollMetrics(t, net.JoinHostPort(ip, port), 60*time.Second, func(m string) bool { return strings.Contains(m, "deskbot_build_info") })
			if code, _ := getWith(t, outside+"/healthz"); code != http.StatusOK {
				t.Errorf("/healthz from outside: %d", code)
			}
			if code, body := getWith(t, outside+"/readyz"); code == http.StatusForbidden || code == http.StatusUnauthorized || !strings.Contains(body, `"store"`) {
				t.Errorf("/readyz from outside: %d %s", code, body)
			}
			code, body := getWith(t, outside+"/")
			switch {
			case tc.token == "" && (code != http.StatusForbidden || !strings.Contains(body, "DESKBOT_UI_TOKEN is not set")):
				t.Errorf("pages without a token, from outside: %d %.300s", code, body)
			case tc.token != "" && code != http.StatusUnauthorized:
				t.Errorf("pages with a token configured, none sent: %d %.300s", code, body)
			}
			if tc.token != "" {
				if code, body := getWith(t, outside+"/rules", "Authorization", "Bearer "+token); code != http.StatusOK || !strings.Contains(body, "page-urgent-unassigned") {
					t.Errorf("pages with the bearer token: %d %.300s", code, body)
				}
			}
			// A port-forward arrives on loopback: the pages are open there.
			if code, _ := getWith(t, "http://127.0.0.1:"+port+"/"); code != http.StatusOK {
				t.Errorf("pages asked on loopback: %d", code)
			}
			if strings.Contains(p.stderr.String()+p.stdout.String(), token) {
				t.Error("the token shows in deskbot's output")
			}
		})
	}
}
