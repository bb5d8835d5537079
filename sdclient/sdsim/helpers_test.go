package sdsim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// fakeClock is an injectable clock for the desk.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newServer(t *testing.T, opts ...sdsim.Option) *sdsim.Server {
	t.Helper()
	s := sdsim.NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

// resp is a decoded answer.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

type req struct {
	method, path, body string
	key                string // "" = default key; "-" = no auth
	contentType        string // "" = application/json when body is set
	header             map[string]string
}

func do(t *testing.T, s *sdsim.Server, r req) resp {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	url := s.URL + r.path
	if !strings.HasPrefix(r.path, "/api/") && !strings.HasPrefix(r.path, "/x") {
		url = s.URL + "/api/v2" + r.path
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	switch r.key {
	case "":
		hr.SetBasicAuth(sdsim.DefaultAPIKey, "X")
	case "-":
	default:
		hr.SetBasicAuth(r.key, "X")
	}
	if r.body != "" {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := s.Client().Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v: %s", r.method, r.path, err, raw)
		}
	}
	return out
}

func get(t *testing.T, s *sdsim.Server, path string) resp {
	t.Helper()
	return do(t, s, req{path: path})
}

func (r resp) want(t *testing.T, status int) resp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.raw)
	}
	return r
}

func (r resp) obj(key string) map[string]any {
	m, _ := r.body[key].(map[string]any)
	return m
}

func (r resp) list(key string) []any {
	l, _ := r.body[key].([]any)
	return l
}

// fieldErr returns the code of the validation error on field, or "".
func (r resp) fieldErr(field string) string {
	if r.body["description"] != "Validation failed" {
		return ""
	}
	for _, e := range r.list("errors") {
		m := e.(map[string]any)
		if m["field"] == field {
			return m["code"].(string)
		}
	}
	return ""
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

var stampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

func ids(list []any) []int64 {
	var out []int64
	for _, x := range list {
		out = append(out, num(x.(map[string]any)["id"]))
	}
	return out
}
