package statuspage

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

func TestIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:9717", true},
		{"127.8.0.1:9717", true},
		{"[::1]:9717", true},
		{"localhost:9717", true},
		{":9717", false},
		{"0.0.0.0:9717", false},
		{"[::]:9717", false},
		{"10.0.0.5:9717", false},
		{"deskbot.internal:9717", false},
	} {
		if got := IsLoopback(tc.addr); got != tc.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func basic(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

// TestAccess is the access contract: open on loopback; elsewhere only
// with the token (bearer or Basic password); off without a token, saying
// how to turn the pages on. Every page and the stylesheet are guarded.
func TestAccess(t *testing.T) {
	w := newWorld(t, testRules, sdsim.WithGenerated(1, 20))
	w.cycle(t)
	const token = "s3cret-token-of-some-length"
	tests := []struct {
		name     string
		opts     []Option
		hdr      []string
		want     int
		wantBody string
	}{
		{"loopback, no credentials", []Option{WithLoopback(true)}, nil, http.StatusOK, "<h1>"},
		{"loopback ignores a token", []Option{WithLoopback(true), WithToken(token)}, nil, http.StatusOK, "<h1>"},
		{"elsewhere without a token configured", []Option{WithLoopback(false)}, nil, http.StatusForbidden, "DESKBOT_UI_TOKEN is not set"},
		{"elsewhere, token configured, none sent", []Option{WithLoopback(false), WithToken(token)}, nil, http.StatusUnauthorized, "need DESKBOT_UI_TOKEN"},
		{"bearer", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", "Bearer " + token}, http.StatusOK, "<h1>"},
		{"bearer, any case", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", "bearer " + token}, http.StatusOK, "<h1>"},
		{"wrong bearer", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", "Bearer " + token + "x"}, http.StatusUnauthorized, ""},
		{"bearer prefix of the token", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", "Bearer " + token[:5]}, http.StatusUnauthorized, ""},
		{"basic password", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", basic("anyone", token)}, http.StatusOK, "<h1>"},
		{"basic with the token as user name", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", basic(token, "")}, http.StatusUnauthorized, ""},
		{"wrong basic password", []Option{WithLoopback(false), WithToken(token)}, []string{"Authorization", basic("ops", "guess")}, http.StatusUnauthorized, ""},
	}
	paths := []string{"/", "/rules", "/rules/urgent-note", "/firings", "/oncall", "/plan", "/backtest", "/static/style.css"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := w.handler(t, tc.opts...)
			for _, p := range paths {
				code, body := get(t, h, p, tc.hdr...)
				if code != tc.want {
					t.Fatalf("GET %s: status %d, want %d; body %.200q", p, code, tc.want, body)
				}
				if p != "/static/style.css" && !strings.Contains(body, tc.wantBody) {
					t.Errorf("GET %s: body lacks %q: %.300q", p, tc.wantBody, body)
				}
				if strings.Contains(body, token) {
					t.Errorf("GET %s: the answer echoes the token", p)
				}
			}
		})
	}
	// The browser's prompt: a 401 asks for Basic credentials.
	h := w.handler(t, WithLoopback(false), WithToken(token))
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	rec := &headerRecorder{h: http.Header{}}
	h.ServeHTTP(rec, req)
	if got := rec.h.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Basic ") {
		t.Errorf("401 without WWW-Authenticate: Basic: %q", got)
	}
}

type headerRecorder struct {
	h    http.Header
	code int
}

func (r *headerRecorder) Header() http.Header         { return r.h }
func (r *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *headerRecorder) WriteHeader(c int)           { r.code = c }
