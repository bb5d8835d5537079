package sdclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// requestsMetric is the name of the counter of requests sent to the desk.
// Dashboards and alerts (deploy/monitoring) use it and its labels.
const requestsMetric = "deskbot_desk_requests_total"

// Values of the class label: whose request it was. The limiter serves
// people's (an Interactive client's) first, from the reserve; the status
// page marks their share of the desk's requests.
const (
	ClassPeople     = "people"
	ClassBackground = "background"
)

// newRequestsCounter is deskbot_desk_requests_total by method, endpoint,
// status and class.
func newRequestsCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: requestsMetric,
		Help: "Requests sent to the desk by endpoint, HTTP status and class (people's or background).",
	}, []string{"method", "endpoint", "status", "class"})
}

// classKey marks a request's context with its class: the client knows it
// (Interactive), the transport that counts the request does not.
type classKey struct{}

// withClass marks ctx as the context of a request of an interactive
// client, or not.
func withClass(ctx context.Context, interactive bool) context.Context {
	return context.WithValue(ctx, classKey{}, interactive)
}

// classOf is the class label of a request: people for an interactive
// client's, background for any other (a request not sent by a Client
// too).
func classOf(r *http.Request) string {
	if interactive, _ := r.Context().Value(classKey{}).(bool); interactive {
		return ClassPeople
	}
	return ClassBackground
}

// WithMetrics counts every request the client sends to the desk (retries
// and followed redirects included, each on its own) in
// deskbot_desk_requests_total, by method, endpoint (see Endpoint), status
// ("error" when no response came) and class (ClassPeople for the requests
// of an Interactive client, else ClassBackground), registered with reg. Clients given the
// same registry share the counter. The transport of the client's HTTP
// client (WithHTTPClient) is wrapped, not changed.
func WithMetrics(reg prometheus.Registerer) Option {
	return func(c *config) { c.metrics, c.given.metrics = reg, true }
}

// registerRequests registers the requests counter with reg, or finds the
// one registered there already (a second client on the same registry).
func registerRequests(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := newRequestsCounter()
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("WithMetrics: register %s: %w", requestsMetric, err)
	}
	return c, nil
}

// InstrumentTransport wraps rt (nil: http.DefaultTransport) so that every
// request to the desk is counted in deskbot_desk_requests_total by endpoint
// (the API path with ids replaced by {id}) and status ("error" when no
// response came), registered with reg (nil: not registered). Give the
// result to WithHTTPClient, or use WithMetrics, which does both.
func InstrumentTransport(rt http.RoundTripper, reg prometheus.Registerer) http.RoundTripper {
	c := newRequestsCounter()
	if reg != nil {
		reg.MustRegister(c)
	}
	return instrument(rt, c)
}

// instrument wraps rt (nil: http.DefaultTransport) to count its requests in
// requests.
func instrument(rt http.RoundTripper, requests *prometheus.CounterVec) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &instrumented{next: rt, requests: requests}
}

// instrumented is a RoundTripper that counts the requests it passes on.
type instrumented struct {
	next     http.RoundTripper
	requests *prometheus.CounterVec
}

// RoundTrip sends r with the wrapped transport and counts it by method,
// endpoint, status and class.
func (t *instrumented) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	status := "error"
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
	}
	t.requests.WithLabelValues(r.Method, Endpoint(r.URL.Path), status, classOf(r)).Inc()
	return resp, err
}

// Endpoint reduces a request path to a low-cardinality label: the part
// from /api/v2 on, with every numeric segment replaced by {id}
// ("/api/v2/tickets/42/notes" -> "/tickets/{id}/notes").
func Endpoint(path string) string {
	if i := strings.Index(path, apiPrefix); i >= 0 {
		path = path[i+len(apiPrefix):]
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" {
			segs[i] = "{id}"
		}
	}
	return "/" + strings.Join(segs, "/")
}
