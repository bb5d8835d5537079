package sdclient

import (
	"net/http"
	"sync/atomic"
	"testing"
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
