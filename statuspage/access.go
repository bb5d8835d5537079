package statuspage

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// IsLoopback reports whether addr (a listen address, host:port) accepts
// connections only from this machine: 127.0.0.0/8, ::1 or localhost. An
// empty host (":9717") listens everywhere.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// guard lets a request through when the pages are open (loopback) or it
// carries the token; otherwise it answers 401 (asking the browser for
// Basic credentials) or, with no token configured, 403 saying how to turn
// the pages on. The token is never logged or echoed.
func (h *Handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.cfg.loopback || arrivedOnLoopback(r) {
			next.ServeHTTP(w, r)
			return
		}
		if h.cfg.token == "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintln(w, "deskbot's status pages are off: DESKBOT_HTTP_ADDR is not a loopback address and DESKBOT_UI_TOKEN is not set.")
			fmt.Fprintln(w, "Set DESKBOT_UI_TOKEN to a long random secret to serve them here (as \"Authorization: Bearer TOKEN\" or as the Basic password),")
			fmt.Fprintln(w, "or listen on 127.0.0.1 and reach them through a port-forward or an SSH tunnel. /healthz, /readyz and /metrics are unaffected.")
			return
		}
		if !h.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="deskbot status", charset="UTF-8"`)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, "deskbot's status pages need DESKBOT_UI_TOKEN: as \"Authorization: Bearer TOKEN\", or as the password of the browser's prompt (any user name).")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// arrivedOnLoopback reports whether the request's connection was made to a
// loopback address of this host, such as kubectl port-forward's (it
// connects to localhost inside the pod) while the server listens on every
// address for the probes: whoever can connect there is on this machine (or
// in this pod), as with a loopback listen address.
func arrivedOnLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// authorized compares the request's bearer token or Basic password with
// the configured token in constant time (over their hashes, so that the
// length does not leak either).
func (h *Handler) authorized(r *http.Request) bool {
	var got string
	if v := r.Header.Get("Authorization"); len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		got = strings.TrimSpace(v[7:])
	} else if _, pw, ok := r.BasicAuth(); ok {
		got = pw
	} else {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(h.cfg.token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
