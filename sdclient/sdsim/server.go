package sdsim

import (
	"net/http"
	"net/http/httptest"
)

// Server is a desk served over HTTP on a loopback port, like an
// httptest.Server. URL is the desk's {base_url}: the API lives under
// URL + "/api/v2".
type Server struct {
	URL  string
	Desk *Desk
	srv  *httptest.Server
}

// NewServer starts a desk built with New(opts...) on a loopback port.
func NewServer(opts ...Option) *Server {
	d := New(opts...)
	srv := httptest.NewServer(d.Handler())
	return &Server{URL: srv.URL, Desk: d, srv: srv}
}

// Client returns an HTTP client configured for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close releases held requests (FaultTimeout) and shuts the server down.
func (s *Server) Close() {
	s.Desk.Close()
	s.srv.CloseClientConnections()
	s.srv.Close()
}
