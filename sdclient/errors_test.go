package sdclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAPIErrorShapesAndSentinels(t *testing.T) {
	cases := []struct {
		status   int
		body     string
		is       error
		wantMsg  string
		wantCode string
	}{
		{400, `{"description":"Validation failed","errors":[{"field":"department_id","message":"It should be a/an Positive Integer","code":"invalid_value"},{"field":"x","message":"","code":"missing_field"}]}`,
			ErrValidation, "sdclient: get ticket 1: 400 Validation failed: department_id: It should be a/an Positive Integer; x: missing_field", ""},
		{401, `{"code":"invalid_credentials","message":"You have to be logged in to perform this action."}`,
			ErrUnauthorized, "sdclient: get ticket 1: 401 You have to be logged in to perform this action. (invalid_credentials)", "invalid_credentials"},
		{403, `{"code":"access_denied","message":"You are not authorized to perform this action."}`,
			ErrForbidden, "sdclient: get ticket 1: 403 You are not authorized to perform this action. (access_denied)", "access_denied"},
		{404, ``, ErrNotFound, "sdclient: get ticket 1: 404 Not Found", ""},
		{409, `{"description":"Conflict"}`, ErrConflict, "sdclient: get ticket 1: 409 Conflict", ""},
		{405, `not json at all`, nil, "sdclient: get ticket 1: 405 not json at all", ""},
		{415, `<html><body>nope</body></html>`, nil, "sdclient: get ticket 1: 415 Unsupported Media Type", ""},
	}
	sentinels := []error{ErrValidation, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrConflict, ErrRateLimited}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			c, mux, _ := setup(t)
			mux.HandleFunc("GET /tickets/1", func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(tc.body, "<") {
					w.Header().Set("Content-Type", "text/html")
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, _, err := c.Tickets.Get(t.Context(), 1)
			if err == nil || err.Error() != tc.wantMsg {
				t.Fatalf("err = %v\nwant  %s", err, tc.wantMsg)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) != (s == tc.is) {
					t.Errorf("errors.Is(err, %v) = %v", s, errors.Is(err, s))
				}
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Code != tc.wantCode || apiErr.Op != "get ticket 1" {
				t.Errorf("api error = %#v", apiErr)
			}
		})
	}
}

// countingReader is an endless error body that counts what was read.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestErrorBodyReadAtMostOneMiB(t *testing.T) {
	c, _, _ := setup(t)
	body := &countingReader{}
	resp := &http.Response{StatusCode: 400, Header: http.Header{}, Body: io.NopCloser(body)}
	e := c.newAPIError(request{op: "get ticket 1", method: "GET", path: "tickets/1"}, resp)
	if body.n > 1<<20 {
		t.Errorf("read %d bytes of the error body, want at most 1 MiB", body.n)
	}
	if !errors.Is(e, ErrValidation) || len(e.Error()) > 300 {
		t.Errorf("error = %.100s... (%d bytes)", e.Error(), len(e.Error()))
	}
}
