package egress

import (
	"errors"
	"fmt"
)

// Errors returned by the egress guard. Refusals arrive as *DeniedError, which
// matches ErrHostNotAllowed or ErrAddressDenied with errors.Is.
var (
	// ErrBadPolicy is returned by NewClient for an invalid Policy; the
	// message names the field or glob.
	ErrBadPolicy = errors.New("egress: invalid policy")
	// ErrHostNotAllowed is matched when a request or one of its redirects
	// targets a host that no Policy.AllowedHosts glob matches.
	ErrHostNotAllowed = errors.New("egress: host not allowed")
	// ErrAddressDenied is matched when a request would reach a loopback,
	// private, link-local, metadata or otherwise special address, or a
	// local-only name, and Policy.AllowPrivate is off.
	ErrAddressDenied = errors.New("egress: address denied")
	// ErrResponseTooLarge is returned when a response body exceeds
	// Policy.MaxResponseBytes.
	ErrResponseTooLarge = errors.New("egress: response too large")
	// ErrTooManyRedirects is returned when a redirect chain is longer than
	// Policy.MaxRedirects.
	ErrTooManyRedirects = errors.New("egress: too many redirects")
	// ErrBadRequest is returned for a malformed request: a bad URL, a scheme
	// other than http and https (including a redirect from https to http),
	// a bad method, or a bad header.
	ErrBadRequest = errors.New("egress: bad request")
)

// DeniedError says which request the egress guard refused and why.
type DeniedError struct {
	// URL is the refused URL (for a redirect, the redirect target) with any
	// password redacted.
	URL string
	// Host is the hostname that was judged.
	Host string
	// Reason explains the refusal, e.g. `host "x" is not in allowed_hosts`.
	Reason string
	// Kind is ErrHostNotAllowed or ErrAddressDenied; errors.Is matches it.
	Kind error
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("http request to %q refused: %s", e.URL, e.Reason)
}

// Is makes a *DeniedError match its Kind.
func (e *DeniedError) Is(target error) bool { return target != nil && target == e.Kind }

func hostNotAllowed(u, host, suffix string) *DeniedError {
	return &DeniedError{
		URL:    u,
		Host:   host,
		Reason: fmt.Sprintf("host %q is not in allowed_hosts%s", host, suffix),
		Kind:   ErrHostNotAllowed,
	}
}

func addressDenied(u, host, reason string) *DeniedError {
	return &DeniedError{
		URL:    u,
		Host:   host,
		Reason: reason + " and allow_private_network is off",
		Kind:   ErrAddressDenied,
	}
}
