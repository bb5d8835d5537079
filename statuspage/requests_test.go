package statuspage

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestOverviewRequestsPerMinute: the overview draws the desk requests of
// each minute sampled from the metrics, the 429s marked, the last hour
// only.
func TestOverviewRequestsPerMinute(t *testing.T) {
	reg := prometheus.NewRegistry()
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "deskbot_desk_requests_total", Help: "h"}, []string{"method", "endpoint", "status", "class"})
	reg.MustRegister(reqs)
	w := newWorld(t, testRules)
	h, err := New(w.sched, w.st, WithLoopback(true), WithGatherer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)

	if _, body := get(t, mux, "/"); strings.Contains(body, "desk requests in the last") {
		t.Fatal("a chart before two samples")
	}
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	h.sample(t0)
	reqs.WithLabelValues("GET", "/tickets/{id}", "200", "background").Add(4)
	reqs.WithLabelValues("GET", "/tickets/{id}", "429", "background").Add(1)
	h.sample(t0.Add(time.Minute))
	reqs.WithLabelValues("POST", "/tickets/{id}/notes", "201", "background").Add(3)
	h.sample(t0.Add(2 * time.Minute))
	_, body := get(t, mux, "/")
	for _, want := range []string{"8 desk requests in the last 2 minutes", "<title>5</title>", "<title>1 answered 429</title>", "<title>3</title>"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	// An hour later the first minutes are gone.
	h.sample(t0.Add(62 * time.Minute))
	reqs.WithLabelValues("GET", "/tickets", "200", "background").Add(2)
	h.sample(t0.Add(63 * time.Minute))
	_, body = get(t, mux, "/")
	if !strings.Contains(body, "2 desk requests in the last 2 minutes") {
		t.Errorf("the chart keeps more than the last hour: %s", body[strings.Index(body, "<svg"):][:300])
	}

	// Run samples until its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
