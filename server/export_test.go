package server

import "time"

// SetJWKSMinRefresh sets how often the issuer's key set may be fetched
// again, for servers made after it, and returns what restores it.
func SetJWKSMinRefresh(d time.Duration) (restore func()) {
	old := jwksMinRefresh
	jwksMinRefresh = d
	return func() { jwksMinRefresh = old }
}
