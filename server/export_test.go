package server

import (
	"net/http"
	"time"
)

// SetJWKSMinRefresh sets how often the issuer's key set may be fetched
// again, for servers made after it, and returns what restores it.
func SetJWKSMinRefresh(d time.Duration) (restore func()) {
	old := jwksMinRefresh
	jwksMinRefresh = d
	return func() { jwksMinRefresh = old }
}

// WithDeadlines wraps h as the server wraps its own handler: each write
// of an answer within write_timeout.
func (s *Server) WithDeadlines(h http.Handler) http.Handler { return s.withDeadlines(h) }
