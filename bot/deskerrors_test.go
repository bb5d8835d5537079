package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deskbot/deskbot/bot/internal/fakedesk"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// secretKey is the API key of the desks below: no answer may show it.
const secretKey = "sekrit-api-key-4711"

// troubledDesk is the simulator behind a switch: while status is set,
// every request whose method is in methods (all when empty) is answered
// with that status instead, and a 429 says Retry-After: 30.
type troubledDesk struct {
	sim     *sdsim.Desk
	url     string
	status  atomic.Int32
	methods atomic.Value // string: "POST", or "" for all
}

func newTroubledDesk(t *testing.T) (*troubledDesk, int64) {
	t.Helper()
	d := &troubledDesk{sim: sdsim.New(sdsim.WithAgentKey(secretKey, sdsim.DefaultAgentID))}
	d.methods.Store("")
	d.sim.AddAgent(sdsim.Agent{FirstName: "Alice", LastName: "Agent", Email: "alice@example.com"})
	carol := d.sim.AddRequester(sdsim.Requester{FirstName: "Carol", PrimaryEmail: "carol@example.com"})
	tk := d.sim.AddTicket(sdsim.Ticket{Subject: "Printer on fire", Priority: 4, RequesterID: carol.ID})
	h := d.sim.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := d.methods.Load().(string)
		if s := int(d.status.Load()); s != 0 && (m == "" || m == r.Method) {
			if s == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "30")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(s)
			_, _ = w.Write([]byte(`{"message":"try later"}`))
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { d.sim.Close(); srv.Close() })
	d.url = srv.URL
	return d, tk.ID
}

func deskRouter(t *testing.T, url string, copts []sdclient.Option, ropts ...Option) *Router {
	t.Helper()
	copts = append([]sdclient.Option{sdclient.WithBackoff(time.Millisecond, 2*time.Millisecond)}, copts...)
	c, err := sdclient.New(url, secretKey, copts...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRouter(NewDeskAdapter(c), slog.New(slog.DiscardHandler), ropts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantAnswer(t *testing.T, resp Reply, want ...string) {
	t.Helper()
	got := resp.Text
	if resp.Card != nil {
		got += "\n" + resp.Card.Text()
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("answer %q\nwant it to contain %q", got, w)
		}
	}
	for _, bad := range []string{"something went wrong", secretKey, "did not answer in time"} {
		if strings.Contains(got, bad) {
			t.Errorf("answer %q contains %q", got, bad)
		}
	}
	if !resp.Failed {
		t.Errorf("answer %q is not marked failed", got)
	}
}

// Issue 17, 5: with the desk down, each command says what failed and
// what to do, instead of "something went wrong (logged)".
func TestDeskUnreachableAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	r := deskRouter(t, url, nil)
	for _, tc := range []struct{ text, what string }{
		{"show 12", "could not see ticket 12"},
		{"note 12 rebooted", "could not add a note to ticket 12"},
		{"search priority:4", "could not search tickets"},
	} {
		wantAnswer(t, handle(r, "UALICE", "/ticket", tc.text),
			tc.what+": the desk is unreachable (connection refused after 4 attempts); try again in a minute")
	}
}

func TestDeskServiceUnavailableAnswers(t *testing.T) {
	d, id := newTroubledDesk(t)
	r := deskRouter(t, d.url, nil)
	n := itoa(id)
	if resp := handle(r, "UALICE", "/ticket", "show "+n); resp.Failed { // warms the agent cache
		t.Fatalf("healthy desk: %+v", resp)
	}
	d.status.Store(http.StatusServiceUnavailable)
	wantAnswer(t, handle(r, "UALICE", "/ticket", "show "+n), "could not see ticket "+n+": the desk answered 503 (service unavailable); try again shortly")
	wantAnswer(t, handle(r, "UALICE", "/ticket", "search priority:4"), "could not search tickets: the desk answered 503 (service unavailable); try again shortly")
	// A note is a POST: not repeated, and it may have been applied.
	d.methods.Store("POST")
	wantAnswer(t, handle(r, "UALICE", "/ticket", "note "+n+" rebooted"),
		"could not add a note to ticket "+n+": the desk answered 503 (service unavailable); it may have been done anyway: look at ticket "+n+" before trying again")
}

func TestDeskRateLimitAnswer(t *testing.T) {
	d, id := newTroubledDesk(t)
	r := deskRouter(t, d.url, nil, WithCommandTimeout(2*time.Second))
	d.status.Store(http.StatusTooManyRequests)
	wantAnswer(t, handle(r, "UALICE", "/ticket", "show "+itoa(id)), "the desk is rate-limiting deskbot: retry in 30 s")
}

// Waiting for deskbot's own budget is not the desk being slow.
func TestOwnBudgetSpentAnswer(t *testing.T) {
	d, id := newTroubledDesk(t)
	r := deskRouter(t, d.url, []sdclient.Option{sdclient.WithRatePerMinute(4)}, WithCommandTimeout(300*time.Millisecond))
	n := itoa(id)
	handle(r, "UALICE", "/ticket", "show "+n) // agent 1 + ticket 3: the minute's budget
	resp := handle(r, "UALICE", "/ticket", "show "+n)
	wantAnswer(t, resp, "could not see ticket "+n+": deskbot's own request budget for this minute is spent: try again in about ")
	if !strings.HasSuffix(resp.Text, " s") {
		t.Errorf("answer %q does not end with the wait in seconds", resp.Text)
	}
}

// /assign with a mention the chat cannot resolve to a person of the desk,
// or an e-mail of no agent, points to the list of whom it can assign to
// (issue 23, 3), not back to what was typed.
func TestAssignUnknownPersonAnswer(t *testing.T) {
	d, id := newTroubledDesk(t)
	r := deskRouter(t, d.url, nil)
	n := itoa(id)
	wantAnswer(t, handle(r, "UALICE", "/assign", n+" <@U123>"),
		"that person has no agent account on the desk: /assign list shows whom tickets can be assigned to (/assign list WORD finds a name or e-mail)")
	wantAnswer(t, handle(r, "UALICE", "/assign", n+" nobody@example.com"),
		"nobody@example.com has no agent account on the desk, so tickets cannot be assigned to them: /assign list shows whom tickets can be assigned to (/assign list WORD finds a name or e-mail)")
}

// A true bug still says so, and only then.
func TestBugStillSaysLogged(t *testing.T) {
	d := fakedesk.New()
	d.FailNext("ticket", context.Canceled)
	r := newTestRouter(t, d)
	if resp := handle(r, "UALICE", "/ticket", "show 42"); !strings.Contains(resp.Text, "something went wrong (logged)") {
		t.Fatalf("answer %q", resp.Text)
	}
}

// The other ways a desk call fails, as the client reports them.
func TestDeskTroubleWords(t *testing.T) {
	r := newTestRouter(t, fakedesk.New())
	unauthorized := &sdclient.APIError{Op: "get ticket 42", Method: "GET", Path: "/tickets/42", StatusCode: 401, Description: "bad key " + secretKey}
	redirected := &sdclient.APIError{Op: "get ticket 42", Method: "GET", Path: "/tickets/42", StatusCode: 301, Location: "https://other.example/api/v2/tickets/42"}
	broken := &url.Error{Op: "Post", URL: "https://desk.example.com/api/v2/tickets/42/notes", Err: syscall.ECONNRESET}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"401", fmt.Errorf("get ticket: %w", unauthorized),
			"the desk rejected deskbot's API key (401 unauthorized): ask whoever runs deskbot to check DESKBOT_DESK_API_KEY"},
		{"redirect", redirected, "the desk redirected deskbot to another address (301): ask whoever runs deskbot to check DESKBOT_DESK_URL"},
		{"stopping", fmt.Errorf("sdclient: get ticket 42: %w", sdclient.ErrStopped), "deskbot is stopping and did not send the request: try again in a minute"},
		{"broken after a POST", fmt.Errorf("sdclient: add note: POST /tickets/42/notes: %w (%w)", broken, sdclient.ErrNotRetried),
			"the connection to the desk failed (connection reset) after the request was sent; it may have been done anyway: look at ticket 42 before trying again"},
		{"no such host", fmt.Errorf("sdclient: get ticket 42: GET /tickets/42: %w (after 4 attempts)", &url.Error{Op: "Get", URL: "https://x.invalid", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}),
			"the desk is unreachable (no such host after 4 attempts); try again in a minute"},
		{"429 without Retry-After", fakedesk.Busy(0), "the desk is rate-limiting deskbot: retry in 60 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := r.deskTrouble(tc.err, 42)
			if !ok || got != tc.want {
				t.Errorf("deskTrouble = %q, %v\nwant %q", got, ok, tc.want)
			}
			if strings.Contains(got, secretKey) {
				t.Errorf("%q shows the key", got)
			}
		})
	}
	if got, ok := r.deskTrouble(errors.New("nil pointer somewhere"), 42); ok {
		t.Errorf("a bug is worded as desk trouble: %q", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
