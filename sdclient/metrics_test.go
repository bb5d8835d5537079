package sdclient_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// requestCounts gathers deskbot_desk_requests_total from reg as
// "METHOD endpoint status class" -> count.
func requestCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "deskbot_desk_requests_total" {
			continue
		}
		if want := "Requests sent to the desk by endpoint, HTTP status and class (people's or background)."; f.GetHelp() != want {
			t.Errorf("help = %q, want %q", f.GetHelp(), want)
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if len(labels) != 4 {
				t.Errorf("labels = %v, want method, endpoint, status and class", labels)
			}
			got[labels["method"]+" "+labels["endpoint"]+" "+labels["status"]+" "+labels["class"]] += m.GetCounter().GetValue()
		}
	}
	return got
}

// WithMetrics counts the requests a client sends to the simulator by
// method, endpoint (ids as {id}), status and class (an Interactive
// client's requests are people's); a second client on the same registry
// adds to the same counter.
func TestWithMetricsCountsRequestsByEndpointAndStatus(t *testing.T) {
	s := sdsim.NewServer()
	t.Cleanup(s.Close)
	reg := prometheus.NewRegistry()
	newClient := func() *sdclient.Client {
		c, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithMetrics(reg), sdclient.WithMaxAttempts(1))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c, c2 := newClient(), newClient()
	ctx := t.Context()
	if _, _, err := c.Agents.Me(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c2.Interactive().Agents.Me(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Tickets.Get(ctx, 424242); !errors.Is(err, sdclient.ErrNotFound) {
		t.Fatalf("get a missing ticket: %v, want ErrNotFound", err)
	}
	want := map[string]float64{
		"GET /agents/me 200 background":    1,
		"GET /agents/me 200 people":        1,
		"GET /tickets/{id} 404 background": 1,
	}
	got := requestCounts(t, reg)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v requests counted, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}

// A request that gets no answer is counted with status "error".
func TestWithMetricsCountsTransportErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := sdclient.New("http://127.0.0.1:1", "key", sdclient.WithMetrics(reg), sdclient.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Agents.Me(t.Context()); err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	if got := requestCounts(t, reg); got["GET /agents/me error background"] != 1 || len(got) != 1 {
		t.Errorf("counted %v, want one GET /agents/me error", got)
	}
}

// New refuses WithMetrics(nil), and a registry holding another collector
// of the same name.
func TestWithMetricsValidation(t *testing.T) {
	if _, err := sdclient.New("https://a.example.com", "k", sdclient.WithMetrics(nil)); err == nil || !strings.Contains(err.Error(), "WithMetrics") {
		t.Errorf("WithMetrics(nil): err = %v, want one naming WithMetrics", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "deskbot_desk_requests_total", Help: "other"}))
	if _, err := sdclient.New("https://a.example.com", "k", sdclient.WithMetrics(reg)); err == nil || !strings.Contains(err.Error(), "WithMetrics") {
		t.Errorf("a clashing collector: err = %v, want one naming WithMetrics", err)
	}
}

// InstrumentTransport counts like WithMetrics, for a transport built by
// the caller.
func TestInstrumentTransport(t *testing.T) {
	s := sdsim.NewServer()
	t.Cleanup(s.Close)
	reg := prometheus.NewRegistry()
	hc := &http.Client{Transport: sdclient.InstrumentTransport(nil, reg)}
	c, err := sdclient.New(s.URL, sdsim.DefaultAPIKey, sdclient.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Agents.Get(t.Context(), sdsim.DefaultAgentID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Interactive().Agents.Get(t.Context(), sdsim.DefaultAgentID); err != nil {
		t.Fatal(err)
	}
	if got := requestCounts(t, reg); got["GET /agents/{id} 200 background"] != 1 || got["GET /agents/{id} 200 people"] != 1 || len(got) != 2 {
		t.Errorf("counted %v, want one GET /agents/{id} 200 of each class", got)
	}
}

func TestEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v2/tickets/42/notes": "/tickets/{id}/notes",
		"/api/v2/tickets/filter":   "/tickets/filter",
		"/x/api/v2/agents":         "/agents",
		"/api/v2/tickets/7":        "/tickets/{id}",
	} {
		if got := sdclient.Endpoint(in); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}
