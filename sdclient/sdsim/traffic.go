package sdsim

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultKind says how an injected fault answers.
type FaultKind int

// Fault kinds.
const (
	// FaultRateLimit answers 429 with Retry-After (Fault.RetryAfter seconds).
	FaultRateLimit FaultKind = iota + 1
	// FaultServerError answers 500.
	FaultServerError
	// FaultTimeout holds the request until the client gives up, the desk
	// closes, or Fault.Hold passes (then answers 504).
	FaultTimeout
	// FaultDrop hijacks the connection and closes it without a response.
	FaultDrop
	// FaultDropAfter applies the request, then closes the connection
	// without a response: the change is made but its answer is lost, as
	// when a connection breaks after the desk committed a POST. Unlike the
	// other kinds it is authenticated and spends the rate budget.
	FaultDropAfter
)

// String names the fault kind.
func (k FaultKind) String() string {
	switch k {
	case FaultRateLimit:
		return "rate-limit"
	case FaultServerError:
		return "server-error"
	case FaultTimeout:
		return "timeout"
	case FaultDrop:
		return "drop"
	case FaultDropAfter:
		return "drop-after"
	}
	return ""
}

// Fault makes the next Count requests that match Method and PathPrefix fail
// in the given way. Injected faults are answered before authentication and
// do not spend the rate budget.
type Fault struct {
	Kind       FaultKind
	Count      int    // requests to affect; 0 means 1
	Method     string // "" matches any method
	PathPrefix string // e.g. "/api/v2/tickets/filter"; "" matches any path
	RetryAfter int    // FaultRateLimit: seconds in Retry-After; 0 means 1
	// RetryAfterForm is how FaultRateLimit writes Retry-After: seconds
	// (default, the desk's documentation) or a date RetryAfter seconds
	// after the desk's clock.
	RetryAfterForm RetryAfterForm
	Hold           time.Duration // FaultTimeout: longest hold; 0 means 30s
}

// RetryAfterForm is a way of writing Retry-After.
type RetryAfterForm int

const (
	// RetryAfterSeconds writes delay-seconds ("30"), as the desk's
	// documentation says.
	RetryAfterSeconds RetryAfterForm = iota
	// RetryAfterHTTPDate writes an IMF-fixdate ("Sun, 06 Nov 1994
	// 08:49:37 GMT"), the other form RFC 9110 allows.
	RetryAfterHTTPDate
	// RetryAfterDateTime writes an RFC 3339 date-time, the format the
	// vendor's schema gives the header.
	RetryAfterDateTime
)

// retryAfter writes secs from now in form.
func (f RetryAfterForm) retryAfter(secs int, now time.Time) string {
	at := now.UTC().Truncate(time.Second).Add(time.Duration(secs) * time.Second)
	switch f {
	case RetryAfterHTTPDate:
		return at.Format(http.TimeFormat)
	case RetryAfterDateTime:
		return at.Format(time.RFC3339)
	}
	return strconv.Itoa(secs)
}

// Request is one request the desk answered, for assertions in tests.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	Status   int // 0 when the connection was dropped or the client gave up
	Time     time.Time
	AgentID  int64     // the authenticated agent, 0 when none
	Cost     int       // rate-limit credits spent
	Fault    FaultKind // the injected fault that answered it, if any
}

// maxLog bounds the request log of a long-running desk.
const maxLog = 100000

type spend struct {
	at   time.Time
	cost int
}

type traffic struct {
	mu      sync.Mutex
	limit   int
	window  []spend
	latency time.Duration
	faults  []*Fault
	log     []Request
	logged  chan struct{} // closed, and replaced, when the log changes
	done    chan struct{}
	once    sync.Once
}

func (t *traffic) init() { t.done, t.logged = make(chan struct{}), make(chan struct{}) }

// changedLocked tells the callers of AwaitRequests that the log changed.
func (t *traffic) changedLocked() {
	close(t.logged)
	t.logged = make(chan struct{})
}

// InjectFault queues a fault; faults are consumed in the order injected.
func (d *Desk) InjectFault(f Fault) {
	if f.Count <= 0 {
		f.Count = 1
	}
	d.traffic.mu.Lock()
	defer d.traffic.mu.Unlock()
	d.traffic.faults = append(d.traffic.faults, &f)
}

// ClearFaults drops every pending fault.
func (d *Desk) ClearFaults() {
	d.traffic.mu.Lock()
	defer d.traffic.mu.Unlock()
	d.traffic.faults = nil
}

// SetLatency delays every later response by latency.
func (d *Desk) SetLatency(latency time.Duration) {
	d.traffic.mu.Lock()
	defer d.traffic.mu.Unlock()
	d.traffic.latency = latency
}

// SetRateLimit changes the per-minute budget (0 = unlimited) and forgets
// what was spent.
func (d *Desk) SetRateLimit(perMinute int) {
	d.traffic.mu.Lock()
	defer d.traffic.mu.Unlock()
	d.traffic.limit = perMinute
	d.traffic.window = nil
}

// Requests returns the request log, oldest first.
func (d *Desk) Requests() []Request {
	d.traffic.mu.Lock()
	defer d.traffic.mu.Unlock()
	return append([]Request(nil), d.traffic.log...)
}

// TicketRequests returns "METHOD path" of each logged request to a
// /tickets path, oldest first: what a test counts to see which ticket
// reads a client made.
func (d *Desk) TicketRequests() []string {
	var out []string
	for _, r := range d.Requests() {
		if strings.Contains(r.Path, "/tickets") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// RequestsTo counts the logged requests of method to path whose query
// has each of the given parameter values ("" for one not sent).
func (d *Desk) RequestsTo(method, path string, params map[string]string) int {
	n := 0
	for _, r := range d.Requests() {
		if r.Method != method || r.Path != path {
			continue
		}
		q, _ := url.ParseQuery(r.RawQuery)
		ok := true
		for k, v := range params {
			ok = ok && q.Get(k) == v
		}
		if ok {
			n++
		}
	}
	return n
}

// ResetRequests empties the request log.
func (d *Desk) ResetRequests() {
	d.traffic.mu.Lock()
	defer d.traffic.mu.Unlock()
	d.traffic.log = nil
	d.traffic.changedLocked()
}

// AwaitRequests waits until the request log satisfies cond (called with a
// copy of the log, oldest first, whenever it changes) and returns the log
// then, or the context's error. Tests use it to wait for a request the
// desk answers after the client has gone, such as one held by
// FaultTimeout.
func (d *Desk) AwaitRequests(ctx context.Context, cond func([]Request) bool) ([]Request, error) {
	for {
		d.traffic.mu.Lock()
		log := append([]Request(nil), d.traffic.log...)
		changed := d.traffic.logged
		d.traffic.mu.Unlock()
		if cond(log) {
			return log, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return log, ctx.Err()
		}
	}
}

// Close releases requests held by FaultTimeout; the desk keeps serving.
func (d *Desk) Close() { d.traffic.once.Do(func() { close(d.traffic.done) }) }

func (t *traffic) record(r Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.log) >= maxLog {
		t.log = append(t.log[:0], t.log[maxLog/2:]...)
	}
	t.log = append(t.log, r)
	t.changedLocked()
}

func (t *traffic) getLatency() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latency
}

func (t *traffic) takeFault(r *http.Request) *Fault {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, f := range t.faults {
		if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
			continue
		}
		if f.PathPrefix != "" && !strings.HasPrefix(r.URL.Path, f.PathPrefix) {
			continue
		}
		f.Count--
		if f.Count <= 0 {
			t.faults = append(t.faults[:i], t.faults[i+1:]...)
		}
		c := *f
		return &c
	}
	return nil
}

// rate spends cost credits at now. It reports whether the request may
// proceed, and sets the X-Ratelimit-* headers (and Retry-After on refusal).
// Requests refused with 429 spend nothing; every other request does, failed
// ones included. An unlimited desk sends no X-Ratelimit headers.
func (t *traffic) rate(h http.Header, now time.Time, cost int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.limit <= 0 {
		return true
	}
	start := now.Add(-time.Minute)
	i := 0
	for i < len(t.window) && !t.window[i].at.After(start) {
		i++
	}
	t.window = t.window[i:]
	used := t.used(now)
	if used+cost > t.limit {
		wait := time.Minute
		freed := 0
		for _, s := range t.window {
			freed += s.cost
			if used-freed+cost <= t.limit {
				wait = s.at.Add(time.Minute).Sub(now)
				break
			}
		}
		secs := max(1, int((wait+time.Second-1)/time.Second))
		t.setHeaders(h, used, 0)
		h.Set("Retry-After", strconv.Itoa(secs))
		return false
	}
	t.window = append(t.window, spend{now, cost})
	t.setHeaders(h, used, cost)
	return true
}

// used is what the requests of the minute before now spent.
func (t *traffic) used(now time.Time) int {
	start := now.Add(-time.Minute)
	n := 0
	for _, s := range t.window {
		if s.at.After(start) {
			n += s.cost
		}
	}
	return n
}

// setHeaders sets the X-Ratelimit-* headers of a request that spends cost
// on top of used.
func (t *traffic) setHeaders(h http.Header, used, cost int) {
	h.Set("X-Ratelimit-Total", strconv.Itoa(t.limit))
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(max(0, t.limit-used-cost)))
	h.Set("X-Ratelimit-Used-CurrentRequest", strconv.Itoa(cost))
}

// rateHeaders sets the headers without spending (for injected 429s).
func (t *traffic) rateHeaders(h http.Header, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.limit <= 0 {
		return
	}
	t.setHeaders(h, t.used(now), 0)
}

// requestCost is what a request spends. Every request costs 1. include= is
// charged like the real desk: on GET /tickets/{id} each embed costs 1 more
// (so include=conversations costs 2 in all), on GET /tickets each embed
// costs 2 more (include=stats costs 3).
func requestCost(r *http.Request) int {
	if r.Method != http.MethodGet {
		return 1
	}
	segs := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, apiPrefix), "/"), "/")
	if len(segs) == 0 || segs[0] != "tickets" || len(segs) > 2 {
		return 1
	}
	inc := r.URL.Query().Get("include")
	if inc == "" {
		return 1
	}
	n := len(strings.Split(inc, ","))
	switch {
	case len(segs) == 1:
		return 1 + 2*n
	case segs[1] != "filter":
		return 1 + n
	}
	return 1
}

// statusRecorder remembers the status and lets FaultDrop hijack.
// The request is logged when its status is written, before the client can
// see the response, so a test that got an answer finds it in Requests().
type statusRecorder struct {
	http.ResponseWriter
	status   int
	onStatus func(int)
}

func (s *statusRecorder) setStatus(code int) {
	if s.status == 0 {
		s.status = code
		if s.onStatus != nil {
			s.onStatus(code)
		}
	}
}

// WriteHeader records the status and writes it.
func (s *statusRecorder) WriteHeader(code int) {
	s.setStatus(code)
	s.ResponseWriter.WriteHeader(code)
}

// Write records a 200 unless a status was written, and writes b.
func (s *statusRecorder) Write(b []byte) (int, error) {
	s.setStatus(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

// Hijack hands over the connection (FaultDrop), when the writer allows.
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := s.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("hijack: response writer does not support it")
	}
	return hj.Hijack()
}

// Flush flushes the wrapped writer, when it can.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// serveFault answers a request with an injected fault.
func (d *Desk) serveFault(w *statusRecorder, r *http.Request, f *Fault) {
	switch f.Kind {
	case FaultRateLimit:
		secs := f.RetryAfter
		if secs <= 0 {
			secs = 1
		}
		d.traffic.rateHeaders(w.Header(), d.now())
		now := d.now()
		if t, err := http.ParseTime(w.Header().Get("Date")); err == nil {
			now = t // a date counts from the Date the answer carries
		}
		w.Header().Set("Retry-After", f.RetryAfterForm.retryAfter(secs, now))
		writeJSON(w, http.StatusTooManyRequests, codeBody("rate_limit_exceeded", "You have exceeded the limit of requests per minute"))
	case FaultServerError:
		writeJSON(w, http.StatusInternalServerError, codeBody("internal_error", "We're sorry, but something went wrong."))
	case FaultTimeout:
		hold := f.Hold
		if hold <= 0 {
			hold = 30 * time.Second
		}
		timer := time.NewTimer(hold)
		defer timer.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-d.traffic.done:
		case <-timer.C:
		}
		writeJSON(w, http.StatusGatewayTimeout, codeBody("timeout", "The request timed out"))
	case FaultDrop, FaultDropAfter:
		conn, _, err := w.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		_ = conn.Close()
	}
}
