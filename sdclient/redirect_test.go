package sdclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// seen is a request as another server saw it.
type seen struct {
	Method, Path, Authorization string
}

// recorder is a server on another port of 127.0.0.1 (another origin) that
// records what it is sent and answers like the desk would, so that a client
// that followed a redirect there would think it succeeded.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{r.Method, r.URL.Path, r.Header.Get("Authorization")})
		rec.mu.Unlock()
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, 200, `{"ticket":{"id":1,"subject":"from elsewhere"}}`)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) seen() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// redirectTo answers every request with status and Location loc.
func redirectTo(status int, loc string, n *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Location", loc)
		w.WriteHeader(status)
	}
}

// A GET redirected to another origin — here another port of the same host,
// where Go's http.Client would re-send the Authorization header — is not
// followed: the other server sees nothing, least of all the credentials,
// and the error says where the desk pointed without user info, query or
// the key.
func TestRedirectToAnotherOriginNotFollowed(t *testing.T) {
	other := newRecorder(t)
	host := strings.TrimPrefix(other.URL, "http://")
	cases := []struct {
		name, loc, want string
	}{
		{"other port", other.URL + apiRoot + "/tickets/1", other.URL + apiRoot + "/tickets/1"},
		{"user info and query stripped", "http://user:hunter2@" + host + "/desk/api/v2/tickets/1?token=abc#frag", other.URL + "/desk/api/v2/tickets/1"},
		{"key in the path redacted", other.URL + "/" + testKey + "/tickets/1", other.URL + "/[REDACTED]/tickets/1"},
		{"https on the same host", "https://" + host + apiRoot + "/tickets/1", "https://" + host + apiRoot + "/tickets/1"},
	}
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%d/%s", status, tc.name), func(t *testing.T) {
				c, mux, _ := setup(t)
				var n atomic.Int32
				mux.HandleFunc("GET /tickets/1", redirectTo(status, tc.loc, &n))
				tk, resp, err := c.Tickets.Get(t.Context(), 1)
				for _, s := range other.seen() {
					if s.Authorization != "" {
						t.Errorf("the other origin received an Authorization header: %+v", s)
					}
				}
				if got := other.seen(); len(got) != 0 {
					t.Errorf("the redirect was followed: the other origin saw %+v", got)
				}
				if err == nil {
					t.Fatalf("no error; ticket %+v", tk)
				}
				if !errors.Is(err, ErrRedirected) || errors.Is(err, ErrInvalidInput) {
					t.Errorf("err = %v, want ErrRedirected (and not ErrInvalidInput: a GET)", err)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Location != tc.want {
					t.Errorf("APIError = %+v, want status %d and Location %s", apiErr, status, tc.want)
				}
				want := fmt.Sprintf("sdclient: get ticket 1: the desk redirected GET to %s (%d); deskbot follows redirects only within %s", tc.want, status, strings.TrimSuffix(c.base, apiRoot+"/"))
				if !strings.HasPrefix(err.Error(), want) {
					t.Errorf("err = %q\nwant prefix %q", err, want)
				}
				for _, leak := range []string{"hunter2", "user:", "token", "abc", "frag", testKey} {
					if strings.Contains(err.Error(), leak) {
						t.Errorf("err %q contains %q", err, leak)
					}
				}
				if n.Load() != 1 || resp == nil || resp.StatusCode != status {
					t.Errorf("desk saw %d requests; response %+v", n.Load(), resp)
				}
			})
		}
	}
}

// A chain that starts within the desk's origin and then leaves it stops at
// the hop that leaves.
func TestRedirectChainLeavingOriginStops(t *testing.T) {
	other := newRecorder(t)
	c, mux, _ := setup(t)
	var n1, n2 atomic.Int32
	mux.HandleFunc("GET /tickets/1", redirectTo(302, apiRoot+"/tickets/2", &n1))
	mux.HandleFunc("GET /tickets/2", redirectTo(302, other.URL+apiRoot+"/tickets/1", &n2))
	_, _, err := c.Tickets.Get(t.Context(), 1)
	if !errors.Is(err, ErrRedirected) || !strings.Contains(err.Error(), "redirected GET to "+other.URL) {
		t.Errorf("err = %v", err)
	}
	if n1.Load() != 1 || n2.Load() != 1 || len(other.seen()) != 0 {
		t.Errorf("requests: %d, %d, other origin %+v", n1.Load(), n2.Load(), other.seen())
	}
}

// A GET redirected within the desk's origin is followed, credentials and
// all.
func TestRedirectWithinOriginFollowed(t *testing.T) {
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			c, mux, _ := setup(t)
			var n1, n2 atomic.Int32
			mux.HandleFunc("GET /tickets/1", redirectTo(status, apiRoot+"/tickets/2?include=stats", &n1))
			mux.HandleFunc("GET /tickets/2", func(w http.ResponseWriter, r *http.Request) {
				n2.Add(1)
				testMethod(t, r, "GET") // checks the Basic credentials too
				writeJSON(w, 200, `{"ticket":{"id":2}}`)
			})
			tk, resp, err := c.Tickets.Get(t.Context(), 1)
			if err != nil || tk.ID != 2 || resp.Attempts != 1 {
				t.Fatalf("ticket %+v, response %+v, err %v", tk, resp, err)
			}
			if n1.Load() != 1 || n2.Load() != 1 {
				t.Errorf("requests %d, %d", n1.Load(), n2.Load())
			}
		})
	}
}

// Same origin means scheme, host and port: an explicit default port is the
// same origin, another scheme or port is not.
func TestSameOrigin(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"https://desk.example/api/v2/", "https://desk.example/other", true},
		{"https://desk.example/", "https://DESK.example:443/x", true},
		{"http://desk.example/", "http://desk.example:80/x", true},
		{"https://desk.example/", "http://desk.example/", false},
		{"https://desk.example/", "https://desk.example:8443/", false},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/", false},
		{"https://desk.example/", "https://evil.example/", false},
		{"https://desk.example/", "https://sub.desk.example/", false},
	}
	for _, tc := range cases {
		a, b := mustParse(t, tc.a), mustParse(t, tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// A redirect loop within the origin stops after maxRedirects hops.
func TestRedirectLoopStops(t *testing.T) {
	c, mux, _ := setup(t)
	var n atomic.Int32
	mux.HandleFunc("GET /tickets/1", redirectTo(302, apiRoot+"/tickets/1", &n))
	_, _, err := c.Tickets.Get(t.Context(), 1)
	if !errors.Is(err, ErrRedirected) || !strings.Contains(err.Error(), fmt.Sprintf("deskbot follows at most %d redirects", maxRedirects)) {
		t.Errorf("err = %v", err)
	}
	if got := n.Load(); got != maxRedirects+1 {
		t.Errorf("%d requests, want %d", got, maxRedirects+1)
	}
}

// A write answered 3xx is an error, whatever the status and wherever the
// Location: it is not re-sent there, and a POST is never turned into a GET.
// The desk did not apply it (ErrInvalidInput, which the scheduler reads as
// "not sent"), except after 303 See Other, which reports a processed
// request: a POST answered 303 may have been applied (ErrNotRetried).
func TestRedirectedWriteNotFollowed(t *testing.T) {
	other := newRecorder(t)
	type call func(c *Client) (*Response, error)
	calls := map[string]call{
		http.MethodPost: func(c *Client) (*Response, error) {
			_, resp, err := c.Tickets.Create(t.Context(), &TicketCreate{Email: "a@example.com", Subject: "s", Description: "d", Status: 2, Priority: 1})
			return resp, err
		},
		http.MethodPut: func(c *Client) (*Response, error) {
			_, resp, err := c.Tickets.Update(t.Context(), 1, &TicketUpdate{Priority: Ptr(3)})
			return resp, err
		},
		http.MethodDelete: func(c *Client) (*Response, error) {
			return c.Tickets.Delete(t.Context(), 1)
		},
	}
	ops := map[string]string{http.MethodPost: "create ticket", http.MethodPut: "update ticket 1", http.MethodDelete: "delete ticket 1"}
	paths := map[string]string{http.MethodPost: "/tickets", http.MethodPut: "/tickets/1", http.MethodDelete: "/tickets/1"}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		for _, status := range []int{301, 302, 303, 307, 308} {
			for _, sameOrigin := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/same-origin=%v", method, status, sameOrigin), func(t *testing.T) {
					c, mux, _ := setup(t)
					var n, moved atomic.Int32
					base := strings.TrimSuffix(c.base, apiRoot+"/")
					loc := other.URL + apiRoot + "/moved"
					if sameOrigin {
						loc = base + apiRoot + "/moved"
					}
					mux.HandleFunc(method+" "+paths[method], redirectTo(status, loc, &n))
					mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
						moved.Add(1)
						t.Errorf("the redirect was followed: %s %s", r.Method, r.URL)
						writeJSON(w, 200, `{"ticket":{"id":1}}`)
					})
					before := len(other.seen())
					resp, err := calls[method](c)
					if got := other.seen()[before:]; len(got) != 0 {
						t.Errorf("the redirect was followed to the other origin: %+v", got)
					}
					if n.Load() != 1 || moved.Load() != 0 {
						t.Errorf("the desk saw %d requests, the target %d", n.Load(), moved.Load())
					}
					if err == nil {
						t.Fatal("a redirected write reported success")
					}
					if !errors.Is(err, ErrRedirected) {
						t.Errorf("err = %v, want ErrRedirected", err)
					}
					var apiErr *APIError
					if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Method != method || apiErr.Location != loc {
						t.Errorf("APIError = %+v", apiErr)
					}
					want := fmt.Sprintf("sdclient: %s: the desk redirected %s to %s (%d); deskbot does not follow redirects of writes", ops[method], method, loc, status)
					if !strings.HasPrefix(err.Error(), want) {
						t.Errorf("err = %q\nwant prefix %q", err, want)
					}
					if resp == nil || resp.StatusCode != status {
						t.Errorf("response %+v", resp)
					}
					applied := status == http.StatusSeeOther
					if errors.Is(err, ErrInvalidInput) == applied {
						t.Errorf("errors.Is(ErrInvalidInput) = %v for %d: %v", !applied, status, err)
					}
					if wantNR := applied && method == http.MethodPost; errors.Is(err, ErrNotRetried) != wantNR {
						t.Errorf("errors.Is(ErrNotRetried) = %v, want %v: %v", !wantNR, wantNR, err)
					}
				})
			}
		}
	}
}

// The policy holds on a caller's *http.Client without changing it, and the
// caller's own CheckRedirect is still asked about redirects the policy
// allows.
func TestRedirectPolicyOnCallersClient(t *testing.T) {
	var asked atomic.Int32
	hc := &http.Client{Timeout: 10 * time.Second}
	mux := http.NewServeMux()
	outer := http.NewServeMux()
	outer.Handle(apiRoot+"/", http.StripPrefix(apiRoot, mux))
	srv := httptest.NewServer(outer)
	t.Cleanup(srv.Close)
	other := newRecorder(t)
	var n atomic.Int32
	mux.HandleFunc("GET /tickets/1", redirectTo(302, other.URL+apiRoot+"/tickets/1", &n))
	mux.HandleFunc("GET /tickets/2", redirectTo(302, apiRoot+"/tickets/3", &n))
	mux.HandleFunc("GET /tickets/3", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"ticket":{"id":3}}`) })

	c, err := New(srv.URL+basePrefix, testKey, WithHTTPClient(hc), WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	if hc.CheckRedirect != nil {
		t.Error("New changed the caller's http.Client")
	}
	if _, _, err := c.Tickets.Get(t.Context(), 1); !errors.Is(err, ErrRedirected) || len(other.seen()) != 0 {
		t.Errorf("cross-origin redirect on the caller's client: %v; other origin saw %+v", err, other.seen())
	}
	if tk, _, err := c.Tickets.Get(t.Context(), 2); err != nil || tk.ID != 3 {
		t.Errorf("same-origin redirect: %+v, %v", tk, err)
	}

	// A caller's CheckRedirect that refuses (either way) wins, and its
	// error's text, which quotes the raw Location, is not passed on.
	for _, refuse := range []error{http.ErrUseLastResponse, errors.New("refused by the caller's policy")} {
		hc2 := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
			asked.Add(1)
			return refuse
		}}
		c2, err := New(srv.URL+basePrefix, testKey, WithHTTPClient(hc2), WithMaxAttempts(3))
		if err != nil {
			t.Fatal(err)
		}
		before := asked.Load()
		_, resp, err := c2.Tickets.Get(t.Context(), 2)
		if !errors.Is(err, ErrRedirected) || !strings.Contains(err.Error(), "redirected GET to "+srv.URL+apiRoot+"/tickets/3 (302)") {
			t.Errorf("caller refused with %v: err = %v", refuse, err)
		}
		if asked.Load() != before+1 || resp == nil || resp.Attempts != 1 {
			t.Errorf("caller's CheckRedirect asked %d times; response %+v", asked.Load()-before, resp)
		}
		// Not asked for what the policy refuses anyway.
		before = asked.Load()
		if _, _, err := c2.Tickets.Get(t.Context(), 1); !errors.Is(err, ErrRedirected) || asked.Load() != before {
			t.Errorf("cross-origin: %v, asked %d", err, asked.Load()-before)
		}
	}
}

// A 3xx the client cannot follow (no Location) is an error too.
func TestRedirectWithoutLocation(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMultipleChoices) })
	_, _, err := c.Tickets.Get(t.Context(), 1)
	if !errors.Is(err, ErrRedirected) || err.Error() != "sdclient: get ticket 1: the desk answered GET with 300 Multiple Choices, a redirect deskbot did not follow" {
		t.Errorf("err = %v", err)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
