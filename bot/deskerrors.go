package bot

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Answers for a desk that cannot do what a command asked (issue 17, 5):
// what failed, and what to do. None of them is a bug, so they are logged
// at warn, and none carries anything of the request but the desk's status
// and the kind of network failure (never the URL's credentials or the API
// key: sdclient redacts its errors, and these texts are built from typed
// fields, not from the error's text).
//
//	the desk is unreachable (connection refused after 4 attempts); try again in a minute
//	the desk answered 503 (service unavailable); try again shortly
//	the desk is rate-limiting deskbot: retry in 30 s
//	deskbot's own request budget for this minute is spent: try again in about 40 s
//	deskbot is stopping and did not send the request: try again in a minute
//	the desk rejected deskbot's API key (401 unauthorized): ask whoever runs deskbot to check DESKBOT_DESK_API_KEY
//	the desk redirected deskbot to another address (301): ask whoever runs deskbot to check DESKBOT_DESK_URL
//
// A write that may have reached the desk before the failure (a POST is
// never repeated) says so: "it may have been done anyway: look at ticket 42
// before trying again".

// deskTrouble words err when it is the desk's (or the way to it) failing,
// and reports whether it is. ticket is the command's ticket (0: none).
func (r *Router) deskTrouble(err error, ticket int64) (string, bool) {
	var apiErr *sdclient.APIError
	maybeDone := ""
	if errors.Is(err, sdclient.ErrNotRetried) {
		maybeDone = "; it may have been done anyway: look at the ticket before trying again"
		if ticket != 0 {
			maybeDone = fmt.Sprintf("; it may have been done anyway: look at ticket %d before trying again", ticket)
		}
	}
	switch {
	case budgetWait(err):
		return fmt.Sprintf("deskbot's own request budget for this minute is spent: try again in about %d s", r.budgetFreesIn()), true
	case errors.Is(err, sdclient.ErrStopped):
		return "deskbot is stopping and did not send the request: try again in a minute", true
	case errors.Is(err, sdclient.ErrRateLimited):
		return fmt.Sprintf("the desk is rate-limiting deskbot: retry in %d s", seconds(deskRetryAfter(err))), true
	case errors.Is(err, sdclient.ErrUnauthorized):
		return "the desk rejected deskbot's API key (401 unauthorized): ask whoever runs deskbot to check DESKBOT_DESK_API_KEY", true
	case errors.Is(err, sdclient.ErrRedirected) && errors.As(err, &apiErr):
		return fmt.Sprintf("the desk redirected deskbot to another address (%d): ask whoever runs deskbot to check DESKBOT_DESK_URL%s", apiErr.StatusCode, maybeDone), true
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 500:
		advice := "; try again shortly"
		if maybeDone != "" {
			advice = maybeDone
		}
		return fmt.Sprintf("the desk answered %d (%s)%s", apiErr.StatusCode, strings.ToLower(http.StatusText(apiErr.StatusCode)), advice), true
	}
	if cause, ok := networkCause(err); ok {
		if maybeDone != "" {
			return fmt.Sprintf("the connection to the desk failed (%s) after the request was sent%s", cause, maybeDone), true
		}
		if n := attempts(err); n > 1 {
			cause += fmt.Sprintf(" after %d attempts", n)
		}
		return fmt.Sprintf("the desk is unreachable (%s); try again in a minute", cause), true
	}
	return "", false
}

// seconds rounds a wait up to whole seconds; an unknown wait is a minute,
// the desk's rate window.
func seconds(d time.Duration) int {
	if d <= 0 {
		return 60
	}
	return int((d + time.Second - 1) / time.Second)
}

// budgetWait reports whether err is a request that sdclient never sent
// because the command's time ran out while it waited for deskbot's own
// rate budget (the desk was not asked at all).
func budgetWait(err error) bool {
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "waiting for rate budget") || strings.Contains(s, "waiting for the ticket list budget") ||
		strings.Contains(s, "waiting for the request budget")
}

// budgetFreesIn estimates, in seconds, when the budget has room again:
// when the oldest credit the commands spent leaves the desk's one-minute
// window; a minute when the commands spent none (the background did).
func (r *Router) budgetFreesIn() int {
	if r.meter != nil {
		if d, ok := r.meter.freed(time.Now(), creditsFullTicket); ok && d > 0 {
			return seconds(d)
		}
	}
	return 60
}

var attemptsRE = regexp.MustCompile(`\(after (\d+) attempts\)`)

// attempts is how often sdclient sent the request before it gave up (its
// error says "(after N attempts)"); 1 when it does not say.
func attempts(err error) int {
	m := attemptsRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// networkCause names a failure to talk to the desk at all, in words a
// person can pass on: "connection refused", "no such host".
func networkCause(err error) (string, bool) {
	var (
		uerr  *url.Error
		operr *net.OpError
		dns   *net.DNSError
		cert  *tls.CertificateVerificationError
		unk   x509.UnknownAuthorityError
		host  x509.HostnameError
		rec   tls.RecordHeaderError
		nerr  net.Error
	)
	if !errors.As(err, &uerr) && !errors.As(err, &operr) {
		return "", false
	}
	switch {
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "no such host", true
		}
		return "the desk's address could not be looked up", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset", true
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the desk's host", true
	case errors.As(err, &cert), errors.As(err, &unk), errors.As(err, &host):
		return "its TLS certificate is not trusted", true
	case errors.As(err, &rec):
		return "it does not speak TLS", true
	case errors.As(err, &nerr) && nerr.Timeout():
		return "no answer in time", true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed", true
	}
	return "network error", true
}
