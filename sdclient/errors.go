package sdclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Sentinels for errors.Is. An *APIError matches the one for its status code.
var (
	ErrNotFound     = errors.New("not found")         // 404
	ErrUnauthorized = errors.New("unauthorized")      // 401
	ErrForbidden    = errors.New("forbidden")         // 403
	ErrValidation   = errors.New("validation failed") // 400
	ErrConflict     = errors.New("conflict")          // 409
	ErrRateLimited  = errors.New("rate limited")      // 429 (*RateLimitError)
	ErrTruncated    = errors.New("result truncated")  // a listing was cut short: a page cap, or a next link without a page number
	ErrInvalidInput = errors.New("invalid input")     // rejected before anything was sent (or a write redirected, not applied: ErrRedirected)
	ErrNotRetried   = errors.New("not retried: a POST may have been applied")

	// ErrResponseTooLarge: a 2xx body was larger than the client's limit
	// (WithMaxResponseBytes, default 32 MiB). It was not decoded and the
	// request was not repeated; for a write, the desk did apply it.
	ErrResponseTooLarge = errors.New("response body exceeds the size limit")
	// ErrRedirected: the desk answered 3xx and the client did not follow
	// (see the redirect policy in redirect.go). The *APIError carries the
	// status and Location. A redirected write other than 303 See Other was
	// not applied, so it matches ErrInvalidInput too; a POST answered 303
	// may have been, so it wraps ErrNotRetried.
	ErrRedirected = errors.New("redirected")
	// ErrBudgetWait: the request was never sent because its context ended
	// while it waited for the client's own rate budget (WithRatePerMinute):
	// the desk was not asked, and no earlier attempt of it can have been
	// applied. The context's error is wrapped too.
	ErrBudgetWait = errors.New("waiting for rate budget")
	// ErrListBudgetWait: the same for the separate ticket list budget
	// (WithListRatePerMinute).
	ErrListBudgetWait = errors.New("waiting for the ticket list budget")
)

// FieldError is one entry of the desk's "errors" array.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Code    string `json:"code"`
}

// APIError is a non-2xx answer from the desk. It carries both error body
// shapes the desk uses: {"description":..., "errors":[...]} (validation) and
// {"code":..., "message":...} (401/403).
type APIError struct {
	Op          string // the operation, e.g. "update ticket 42"
	Method      string
	Path        string // API path relative to /api/v2, e.g. "/tickets/42"
	StatusCode  int
	Code        string // top-level "code", when the desk sent one
	Description string // "description" or "message"; for a 3xx, why it was not followed
	Errors      []FieldError
	// Location is, for a 3xx, where the desk redirected to, reduced to
	// scheme://host/path (no user info, query or fragment).
	Location string
}

// Error reads like "sdclient: update ticket 42: 400 Validation failed:
// status: It should be one of the choice value".
func (e *APIError) Error() string {
	if isRedirect(e.StatusCode) {
		// "sdclient: create ticket: the desk redirected POST to
		// https://other.example/api/v2/tickets (301); deskbot does not
		// follow redirects of writes"
		if e.Location == "" {
			return fmt.Sprintf("sdclient: %s: the desk answered %s with %d %s, a redirect deskbot did not follow", e.Op, e.Method, e.StatusCode, http.StatusText(e.StatusCode))
		}
		msg := fmt.Sprintf("sdclient: %s: the desk redirected %s to %s (%d)", e.Op, e.Method, e.Location, e.StatusCode)
		if e.Description != "" {
			msg += "; " + e.Description
		}
		return msg
	}
	var b strings.Builder
	b.WriteString("sdclient: ")
	b.WriteString(e.Op)
	fmt.Fprintf(&b, ": %d", e.StatusCode)
	desc := e.Description
	if desc == "" {
		desc = http.StatusText(e.StatusCode)
	}
	if desc != "" {
		b.WriteString(" ")
		b.WriteString(desc)
	}
	if e.Code != "" && len(e.Errors) == 0 {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	for i, fe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if fe.Field != "" {
			b.WriteString(fe.Field)
			b.WriteString(": ")
		}
		msg := fe.Message
		if msg == "" {
			msg = fe.Code
		}
		b.WriteString(msg)
	}
	return b.String()
}

// Is matches the sentinel of the error's status code. A 3xx (a redirect not
// followed) matches ErrRedirected, and ErrInvalidInput too when it answered
// a write that the desk certainly did not apply (see redirect.go).
func (e *APIError) Is(target error) bool {
	if isRedirect(e.StatusCode) {
		return target == ErrRedirected || (target == ErrInvalidInput && writeNotApplied(e.Method, e.StatusCode))
	}
	sentinel, ok := statusSentinels[e.StatusCode]
	return ok && target == sentinel
}

// statusSentinels are the sentinels an APIError of a status matches.
var statusSentinels = map[int]error{
	http.StatusNotFound:        ErrNotFound,
	http.StatusUnauthorized:    ErrUnauthorized,
	http.StatusForbidden:       ErrForbidden,
	http.StatusBadRequest:      ErrValidation,
	http.StatusConflict:        ErrConflict,
	http.StatusTooManyRequests: ErrRateLimited,
}

// RateLimitError is a 429: the desk's account budget is spent. RetryAfter is
// how long the desk asked to wait.
type RateLimitError struct {
	*APIError
	RetryAfter time.Duration
	Rate       Rate
}

// Error says the desk limited the rate, and how long to wait.
func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%s (retry after %v)", e.APIError.Error(), e.RetryAfter)
}

// Is matches ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Unwrap gives the underlying *APIError.
func (e *RateLimitError) Unwrap() error { return e.APIError }

// newAPIError builds an *APIError from a non-2xx response, reading at most
// 1 MiB of its body and scrubbing any credential the body may echo.
func (c *Client) newAPIError(r request, hresp *http.Response) *APIError {
	defer hresp.Body.Close()
	e := &APIError{Op: r.op, Method: r.method, Path: "/" + r.path, StatusCode: hresp.StatusCode}
	data, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
	var body struct {
		Description string       `json:"description"`
		Message     string       `json:"message"`
		Code        any          `json:"code"`
		Errors      []FieldError `json:"errors"`
	}
	if len(data) > 0 && json.Unmarshal(data, &body) == nil {
		e.Description = body.Description
		if e.Description == "" {
			e.Description = body.Message
		}
		if body.Code != nil {
			e.Code = fmt.Sprint(body.Code)
		}
		e.Errors = body.Errors
	} else if len(data) > 0 && !strings.Contains(hresp.Header.Get("Content-Type"), "html") {
		// Not JSON: keep a short plain-text reason.
		s := strings.TrimSpace(string(data))
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		e.Description = s
	}
	e.Description = c.redactString(e.Description)
	e.Code = c.redactString(e.Code)
	for i := range e.Errors {
		e.Errors[i].Field = c.redactString(e.Errors[i].Field)
		e.Errors[i].Message = c.redactString(e.Errors[i].Message)
		e.Errors[i].Code = c.redactString(e.Errors[i].Code)
	}
	return e
}

// invalid reports bad input caught before anything was sent.
func invalid(op, format string, args ...any) error {
	return fmt.Errorf("sdclient: %s: %s: %w", op, fmt.Sprintf(format, args...), ErrInvalidInput)
}
