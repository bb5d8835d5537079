package statuspage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/deskbot/deskbot/firing"
	"github.com/deskbot/deskbot/internal/testkit"
	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/scheduler"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
	"github.com/deskbot/deskbot/store"
)

// hostile is a ticket subject that would run script if a page did not
// escape it.
const hostile = `<script>document.title="pwned"</script><img src=x onerror=alert(1)> printer`

// cappedRules is one rule, "capped", over the waiting urgent tickets
// whose cap lets max firings through a cycle and holds the rest back.
func cappedRules(max int) string {
	return `version: 1
rules:
  - name: capped
    query: "priority:4 AND status:2"
    max_firings_per_cycle: ` + strconv.Itoa(max) + `
    actions:
      - note: "seen"
`
}

const testRules = `version: 1
channels: {desk: "#it-desk"}
rules:
  - name: urgent-note
    query: "priority:4"
    actions:
      - note: "Urgent: {{ ticket.subject }}"
  - name: printer-alert
    query: "status:open"
    if: 'ticket.subject contains "printer"'
    actions:
      - alert: {channel: desk, text: "printer #{{ ticket.id }}"}
  - name: never-matches
    query: "priority:1 AND status:5"
    every: 5m
    actions:
      - note: "closed low"
`

// world is a desk simulator, the real client, a state store and a
// scheduler over them, after one cycle: what the pages read.
type world struct {
	sim   *sdsim.Server
	st    *store.Store
	sched *scheduler.Scheduler
	set   *rules.Set
}

func newWorld(t testing.TB, rulesYAML string, simOpts ...sdsim.Option) *world {
	t.Helper()
	return newWorldWith(t, rulesYAML, nil, simOpts...)
}

// newWorldWith is newWorld with more scheduler options.
func newWorldWith(t testing.TB, rulesYAML string, schedOpts []scheduler.Option, simOpts ...sdsim.Option) *world {
	t.Helper()
	w := &world{sim: sdsim.NewServer(simOpts...)}
	t.Cleanup(w.sim.Close)
	client, err := sdclient.New(w.sim.URL, sdsim.DefaultAPIKey, sdclient.WithRatePerMinute(1000000))
	if err != nil {
		t.Fatal(err)
	}
	w.st = testkit.Store(t, filepath.Join(t.TempDir(), "state.db"))
	w.set = testkit.Rules(t, rulesYAML)
	logger := testkit.Logger()
	opts := append([]scheduler.Option{scheduler.WithSingleton(false)}, schedOpts...)
	if oc := w.set.OnCall(); oc != nil {
		// Pages go to a pager that takes them (no chat here); the store
		// keeps them open for /oncall.
		esc, err := oncall.NewEscalator(oc, w.st, nopPager{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, scheduler.WithEscalator(esc, time.Minute))
	}
	w.sched, err = scheduler.New(logger, firing.ClientDesk(client), w.set, w.st, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) cycle(t testing.TB) {
	t.Helper()
	res, err := w.sched.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Complete {
			t.Fatalf("cycle of %s incomplete: %v", r.Job, r.Err)
		}
	}
}

func (w *world) handler(t testing.TB, opts ...Option) http.Handler {
	t.Helper()
	h, err := New(w.sched, w.st, append([]Option{WithLoopback(true), WithTicketLink(func(id int64) string {
		return w.sim.URL + "/a/tickets/" + itoa(id)
	})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	return mux
}

type nopPager struct{}

func (nopPager) Page(context.Context, oncall.PageRequest) error { return nil }

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// get fetches path from h and returns the status and body.
func get(t testing.TB, h http.Handler, path string, hdr ...string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func storeFilter(limit int) store.FiringFilter { return store.FiringFilter{Limit: limit} }
