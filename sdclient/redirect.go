package sdclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Redirect policy.
//
// Every request carries the API key (Basic auth). Left to itself, Go's
// http.Client follows redirects: it re-sends the Authorization header to any
// port of the same host (it strips it only for another host), and it turns a
// POST answered 301, 302 or 303 into a GET, so a write that never happened
// would be reported as a success. So the client follows a redirect only
// when all of these hold:
//
//   - the request is a GET or HEAD: a write (POST, PUT, DELETE, ...) is never
//     re-sent elsewhere nor turned into a GET, whatever the 3xx;
//   - the target has the base URL's origin (scheme, host and port), at every
//     hop: the credentials go nowhere else, not even over https to the same
//     host when the base URL says http;
//   - at most maxRedirects redirects have been followed;
//   - the caller's own CheckRedirect (WithHTTPClient), if any, agrees.
//
// Otherwise the 3xx is the desk's answer: an *APIError with its StatusCode
// and Location (scheme://host/path only: user info, query and fragment may
// hold secrets) matching ErrRedirected, not retried. A redirected write was
// not applied by the desk, except after 303 See Other (RFC 9110 15.4.4: the
// server processed the request and points at the result), so it also
// matches ErrInvalidInput, like a request refused before sending: nothing
// happened and sending it again will not help until the base URL is fixed.
// A POST answered 303 wraps ErrNotRetried instead: it may have been
// applied.

// maxRedirects is how many redirects within the desk's origin one GET may
// follow.
const maxRedirects = 5

// redirectRefused is what the policy returns to http.Client to stop; the
// client then returns the 3xx and this error (wrapped in a *url.Error that
// quotes the raw Location, which is never shown).
type redirectRefused struct{ reason string }

// Error says why the redirect was not followed.
func (e *redirectRefused) Error() string { return e.reason }

// withRedirectPolicy returns a copy of hc (the caller's client is never
// changed) that follows redirects as the policy above says.
func withRedirectPolicy(hc *http.Client, base *url.URL) *http.Client {
	cp := *hc
	next := hc.CheckRedirect
	origin := originOf(base)
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0]
		switch {
		case first.Method != http.MethodGet && first.Method != http.MethodHead:
			return &redirectRefused{"deskbot does not follow redirects of writes"}
		case !sameOrigin(req.URL, base):
			return &redirectRefused{"deskbot follows redirects only within " + origin + ", where its credentials go"}
		case len(via) > maxRedirects:
			return &redirectRefused{fmt.Sprintf("deskbot follows at most %d redirects", maxRedirects)}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &cp
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (a missing port is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// originOf prints scheme://host[:port] of u.
func originOf(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// redirectError reports a 3xx that was not followed: refused is the
// policy's reason, or nil when the response came back unfollowed for
// another reason (no Location, or the caller's CheckRedirect said
// http.ErrUseLastResponse).
func (c *Client) redirectError(r request, req *http.Request, hresp *http.Response, refused error) error {
	apiErr := c.newAPIError(r, hresp) // drains and closes the body
	apiErr.Code, apiErr.Errors = "", nil
	apiErr.Description = "deskbot did not follow it"
	var rr *redirectRefused
	switch {
	case errors.As(refused, &rr):
		apiErr.Description = rr.reason
	case refused != nil:
		// The caller's CheckRedirect: its text may quote the raw Location.
		apiErr.Description = "the HTTP client's redirect policy stopped it"
	}
	from := req.URL
	if hresp.Request != nil && hresp.Request.URL != nil {
		from = hresp.Request.URL // the last hop
	}
	if loc := hresp.Header.Get("Location"); loc != "" {
		if u, err := from.Parse(loc); err == nil && u.Host != "" {
			apiErr.Location = c.redactString((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String())
		}
	}
	if hresp.StatusCode == http.StatusSeeOther && !idempotent(r.method) {
		return fmt.Errorf("%w (%w)", apiErr, ErrNotRetried)
	}
	return apiErr
}

// isRedirect reports whether a 3xx status is one the client reports as a
// redirect not followed.
func isRedirect(status int) bool { return status >= 300 && status < 400 }

// writeNotApplied reports whether a 3xx answer to method certainly left the
// desk unchanged: a write answered anything but 303 See Other.
func writeNotApplied(method string, status int) bool {
	return isRedirect(status) && status != http.StatusSeeOther &&
		method != http.MethodGet && method != http.MethodHead
}
