package sdclient

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// route registers a handler for "METHOD /path" that asserts the query (raw)
// and, when wantBody is not empty, the JSON body, then answers status with
// respBody. It returns a counter of requests served.
func route(t *testing.T, mux *http.ServeMux, pattern, wantQuery, wantBody string, status int, respBody string) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		testMethod(t, r, r.Method)
		testQuery(t, r, wantQuery)
		if wantBody != "" {
			testBody(t, r, wantBody)
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, respBody)
	})
	return &n
}

// goesAfter checks that the acquire reporting on in starts when the fake
// clock has moved d, not a second before: it advances d-1s, sees it still
// waiting, then 1s more.
func goesAfter(t *testing.T, clock *clockwork.FakeClock, in <-chan error, d time.Duration, why string) {
	t.Helper()
	clock.Advance(d - time.Second)
	select {
	case <-in:
		t.Fatal("went before " + why)
	default:
	}
	clock.Advance(time.Second)
	if err := <-in; err != nil {
		t.Fatal(err)
	}
}

// limitedOnce answers the first request with a 429 asking to retry after
// retryAfter seconds, and the others with status and body; calls counts
// them.
func limitedOnce(calls *atomic.Int32, retryAfter string, status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", retryAfter)
			w.Header().Set("X-Ratelimit-Remaining", "0")
			writeJSON(w, 429, `{"description":"You have exceeded the limit of requests per minute"}`)
			return
		}
		writeJSON(w, status, body)
	}
}
