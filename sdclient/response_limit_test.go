package sdclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ticketJSON returns {"ticket":{"id":1,"subject":"xx..."}} of exactly n
// bytes.
func ticketJSON(t *testing.T, n int) string {
	t.Helper()
	const head, tail = `{"ticket":{"id":1,"subject":"`, `"}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatalf("ticketJSON: %d bytes is too small", n)
	}
	return head + strings.Repeat("x", pad) + tail
}

// A 2xx body up to the limit decodes; one byte more fails with
// ErrResponseTooLarge naming the limit, is never decoded (even when its
// first bytes are a complete JSON value) and is not retried. Both with a
// Content-Length and streamed (chunked, length unknown).
func TestResponseBodyLimit(t *testing.T) {
	const limit = 4096
	cases := []struct {
		name    string
		body    func(t *testing.T) string
		wantErr bool
	}{
		{"exactly at the limit", func(t *testing.T) string { return ticketJSON(t, limit) }, false},
		{"under the limit", func(t *testing.T) string { return ticketJSON(t, 100) }, false},
		{"one byte over", func(t *testing.T) string { return ticketJSON(t, limit+1) }, true},
		// The first limit bytes are a whole ticket: a body cut at the
		// limit must not pass for a complete one.
		{"complete JSON at the limit, then more", func(t *testing.T) string { return ticketJSON(t, limit) + "\n\n" }, true},
		{"far over", func(t *testing.T) string { return ticketJSON(t, 10*limit) }, true},
	}
	for _, tc := range cases {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", tc.name, chunked), func(t *testing.T) {
				c, mux, _ := setup(t, WithMaxResponseBytes(limit))
				body := tc.body(t)
				var n atomic.Int32
				mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) {
					n.Add(1)
					w.Header().Set("Content-Type", "application/json")
					if chunked {
						w.WriteHeader(200)
						w.(http.Flusher).Flush() // headers out before the body: no Content-Length
					} else {
						w.Header().Set("Content-Length", strconv.Itoa(len(body)))
					}
					io.WriteString(w, body)
				})
				tk, resp, err := c.Tickets.Get(t.Context(), 1)
				if got := n.Load(); got != 1 {
					t.Errorf("the desk saw %d requests, want exactly 1", got)
				}
				if resp == nil || resp.Attempts != 1 {
					t.Errorf("response %+v, want 1 attempt", resp)
				}
				if !tc.wantErr {
					if err != nil || tk == nil || tk.ID != 1 {
						t.Fatalf("%d-byte body: ticket %+v, err %v", len(body), tk, err)
					}
					return
				}
				if !errors.Is(err, ErrResponseTooLarge) {
					t.Fatalf("%d-byte body: err = %v, want ErrResponseTooLarge", len(body), err)
				}
				if tk != nil {
					t.Errorf("a ticket was decoded from a body over the limit: %+v", tk)
				}
				if want := "sdclient: get ticket 1: response body exceeds the size limit of 4 KiB"; err.Error() != want {
					t.Errorf("err = %q, want %q", err, want)
				}
			})
		}
	}
}

// The default limit is 32 MiB: a desk announcing a larger body is refused
// with an error naming it, and a list is not retried.
func TestResponseBodyDefaultLimit(t *testing.T) {
	c, mux, _ := setup(t)
	if c.maxResponse != 32<<20 {
		t.Errorf("default limit %d, want 32 MiB", c.maxResponse)
	}
	var n atomic.Int32
	mux.HandleFunc("GET /tickets", func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(40<<20))
		io.WriteString(w, `{"tickets":[`)
		item := strings.Repeat(`{"id":1},`, 1<<10)
		for {
			if _, err := io.WriteString(w, item); err != nil {
				return // the client hung up
			}
		}
	})
	_, _, err := c.Tickets.List(t.Context(), nil)
	if !errors.Is(err, ErrResponseTooLarge) || !strings.Contains(err.Error(), "sdclient: list tickets: response body exceeds the size limit of 32 MiB") {
		t.Errorf("err = %v", err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("the desk saw %d requests, want exactly 1", got)
	}
}

// An endless body is not read to its end to find out it is too big: the
// client reads just past the limit and hangs up.
func TestResponseBodyNotReadPastLimit(t *testing.T) {
	const limit = 1 << 20
	c, mux, _ := setup(t, WithMaxResponseBytes(limit))
	var written atomic.Int64
	done := make(chan struct{})
	mux.HandleFunc("GET /tickets", func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"tickets":[`)
		item := strings.Repeat(`{"id":1},`, 1<<12)
		for written.Load() < 256<<20 {
			k, err := io.WriteString(w, item)
			written.Add(int64(k))
			if err != nil {
				return
			}
		}
	})
	_, _, err := c.Tickets.List(t.Context(), nil)
	if !errors.Is(err, ErrResponseTooLarge) || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("err = %v", err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the server is still writing: the client did not hang up")
	}
	// Socket buffers hold a few MiB at most; reading the body to its end
	// would take all 256.
	if w := written.Load(); w > 32<<20 {
		t.Errorf("the server wrote %d MiB before the client hung up", w>>20)
	}
}

func TestWithMaxResponseBytesValidation(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if _, err := New("https://desk.example", testKey, WithMaxResponseBytes(n)); err == nil || !strings.Contains(err.Error(), "WithMaxResponseBytes") {
			t.Errorf("WithMaxResponseBytes(%d): %v", n, err)
		}
	}
	c, err := New("https://desk.example", testKey, WithMaxResponseBytes(1<<30))
	if err != nil || c.maxResponse != 1<<30 {
		t.Errorf("WithMaxResponseBytes(1 GiB): %v", err)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{1: "1 byte", 100: "100 bytes", 1024: "1 KiB", 1536: "1536 bytes", 32 << 20: "32 MiB", 3 << 30: "3 GiB", 1<<20 + 1024: "1025 KiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
