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
	ErrInvalidInput = errors.New("invalid input")     // rejected before anything was sent
	ErrNotRetried   = errors.New("not retried: a POST may have been applied")
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
	Description string // "description" or "message"
	Errors      []FieldError
}

// Error reads like "sdclient: update ticket 42: 400 Validation failed:
// status: It should be one of the choice value".
func (e *APIError) Error() string {
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

// Is matches the sentinel of the error's status code.
func (e *APIError) Is(target error) bool {
	switch e.StatusCode {
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusUnauthorized:
		return target == ErrUnauthorized
	case http.StatusForbidden:
		return target == ErrForbidden
	case http.StatusBadRequest:
		return target == ErrValidation
	case http.StatusConflict:
		return target == ErrConflict
	case http.StatusTooManyRequests:
		return target == ErrRateLimited
	}
	return false
}

// RateLimitError is a 429: the desk's account budget is spent. RetryAfter is
// how long the desk asked to wait.
type RateLimitError struct {
	*APIError
	RetryAfter time.Duration
	Rate       Rate
}

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
