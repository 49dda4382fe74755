package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobwas/glob"
)

// Defaults applied by NewClient to zero Policy fields, and fixed limits.
const (
	// DefaultMaxResponseBytes is the response body cap when
	// Policy.MaxResponseBytes is 0.
	DefaultMaxResponseBytes int64 = 50 << 20
	// DefaultMaxRedirects is the redirect limit when Policy.MaxRedirects
	// is 0.
	DefaultMaxRedirects = 10

	dialTimeout           = 10 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	expectContinueTimeout = time.Second
	idleConnTimeout       = 90 * time.Second
	maxResponseHeaderSize = 1 << 20
	maxPrealloc           = 1 << 20
)

// Policy says where a Client may send requests and how much it may take
// back. The zero Policy allows nothing.
type Policy struct {
	// AllowedHosts are hostname globs in gobwas/glob syntax without
	// separators, so "*" matches any host and "*.example.com" matches
	// "a.b.example.com" but not "example.com". They are matched
	// case-insensitively against the URL's hostname (no port, no userinfo,
	// IPv6 without brackets), ignoring one trailing dot. Empty denies all.
	AllowedHosts []string
	// AllowPrivate lets requests reach loopback, private, link-local, CGNAT,
	// multicast, unspecified, reserved and cloud-metadata addresses and
	// local-only names such as "localhost". When false they are refused
	// before any connection for IP literals and known names, and at dial
	// time, on the resolved addresses actually dialed, for everything else.
	// Either way "localhost" and names under it are never sent to the
	// resolver: refused without AllowPrivate, they resolve to 127.0.0.1 and
	// ::1 with it (RFC 6761).
	AllowPrivate bool
	// MaxResponseBytes caps a response body; 0 means
	// DefaultMaxResponseBytes. A larger body fails with ErrResponseTooLarge.
	MaxResponseBytes int64
	// MaxRedirects is the number of redirects a request may follow; 0 means
	// DefaultMaxRedirects. Each hop is checked like the first request.
	MaxRedirects int
	// Timeout, when positive, bounds each request including its body, in
	// addition to the caller's context.
	Timeout time.Duration
}

// Request is one HTTP request from a guest.
type Request struct {
	// URL is the absolute http or https URL.
	URL string
	// Method is the HTTP method; "" means GET. It is uppercased.
	Method string
	// Headers are the request headers. A Host header must equal the URL's
	// host.
	Headers map[string]string
	// Body is sent as the request body when non-empty.
	Body []byte
}

// Response is the answer to a Request.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Headers holds the response headers with lowercased names; multiple
	// values of one header are joined with ",".
	Headers map[string]string
	// Body is the whole response body.
	Body []byte
}

// Client sends guest requests under a Policy. It is safe for concurrent use;
// it pools connections, so a long-lived host should reuse one Client per
// policy.
type Client struct {
	globs        []glob.Glob
	allowPrivate bool
	maxBytes     int64
	maxRedirects int
	timeout      time.Duration

	lookup   func(ctx context.Context, host string) ([]netip.Addr, error)
	dialAddr func(ctx context.Context, network, addr string) (net.Conn, error)

	transport *http.Transport
	hc        *http.Client
}

// options are test hooks; the zero value is what NewClient uses.
type options struct {
	// lookup replaces the system resolver.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// dialAddr replaces the net.Dialer that connects to a checked
	// "ip:port"; it bypasses the Control check.
	dialAddr func(ctx context.Context, network, addr string) (net.Conn, error)
	// tlsConfig replaces the TLS client configuration.
	tlsConfig *tls.Config
}

// NewClient validates p and returns a Client that enforces it. The error
// wraps ErrBadPolicy and names the bad field or glob.
func NewClient(p Policy) (*Client, error) {
	return newClient(p, options{})
}

func newClient(p Policy, o options) (*Client, error) {
	c := &Client{
		allowPrivate: p.AllowPrivate,
		maxBytes:     p.MaxResponseBytes,
		maxRedirects: p.MaxRedirects,
		timeout:      p.Timeout,
		lookup:       o.lookup,
		dialAddr:     o.dialAddr,
	}
	for i, pat := range p.AllowedHosts {
		norm := normalizeHost(pat)
		if norm == "" {
			return nil, fmt.Errorf("%w: allowed_hosts[%d] is empty; want a hostname glob such as \"api.example.com\" or \"*.example.com\"", ErrBadPolicy, i)
		}
		g, err := glob.Compile(norm)
		if err != nil {
			return nil, fmt.Errorf("%w: allowed_hosts[%d] %q is not a valid glob: %v", ErrBadPolicy, i, pat, err)
		}
		c.globs = append(c.globs, g)
	}
	switch {
	case p.MaxResponseBytes < 0:
		return nil, fmt.Errorf("%w: max_response_bytes is %d; want 0 (default) or more", ErrBadPolicy, p.MaxResponseBytes)
	case p.MaxRedirects < 0:
		return nil, fmt.Errorf("%w: max_redirects is %d; want 0 (default) or more", ErrBadPolicy, p.MaxRedirects)
	case p.Timeout < 0:
		return nil, fmt.Errorf("%w: timeout is %v; want 0 (none) or more", ErrBadPolicy, p.Timeout)
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	if c.maxRedirects == 0 {
		c.maxRedirects = DefaultMaxRedirects
	}
	if c.lookup == nil {
		c.lookup = defaultLookup
	}
	if c.dialAddr == nil {
		d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second, Control: c.control}
		c.dialAddr = d.DialContext
	}
	tlsConf := o.tlsConfig
	if tlsConf == nil {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	c.transport = &http.Transport{
		Proxy:                  nil, // a proxy would connect for us, past the address check
		DialContext:            c.dialContext,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ExpectContinueTimeout:  expectContinueTimeout,
		IdleConnTimeout:        idleConnTimeout,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		MaxResponseHeaderBytes: maxResponseHeaderSize,
		ForceAttemptHTTP2:      true,
	}
	c.hc = &http.Client{
		Transport:     c.transport,
		CheckRedirect: c.checkRedirect,
	}
	return c, nil
}

// HostAllowed reports whether a hostname (without port or brackets) matches
// one of the policy's AllowedHosts, ignoring case and one trailing dot.
// Non-ASCII hosts are never allowed; use their punycode ("xn--") form.
// It does not consider addresses; see Policy.AllowPrivate.
func (c *Client) HostAllowed(host string) bool {
	h := normalizeHost(host)
	if h == "" || !isASCII(h) {
		return false
	}
	for _, g := range c.globs {
		if safeMatch(g, h) {
			return true
		}
	}
	return false
}

// safeMatch runs g.Match and treats a panic in the glob library as no match,
// so that a hostile hostname can neither crash the host nor get in.
func safeMatch(g glob.Glob, s string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return g.Match(s)
}

// CloseIdleConnections closes the Client's idle pooled connections. The
// Client stays usable.
func (c *Client) CloseIdleConnections() { c.transport.CloseIdleConnections() }

// Do sends r and reads the whole response, following redirects allowed by
// the policy. Canceling ctx interrupts it at any stage. Refusals are
// *DeniedError values matching ErrHostNotAllowed or ErrAddressDenied; other
// failures match ErrBadRequest, ErrTooManyRedirects, ErrResponseTooLarge or
// the context's error.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: http request to %q: nil context", ErrBadRequest, r.URL)
	}
	method, err := checkMethod(r.Method)
	if err != nil {
		return nil, fmt.Errorf("%w: http request to %q: %w", ErrBadRequest, r.URL, err)
	}
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: http request to %q: %v", ErrBadRequest, r.URL, err)
	}
	// Judge the very URL the client will use, not a second parse of it.
	if err := c.checkURL(req.URL, ""); err != nil {
		return nil, err
	}
	if err := setHeaders(req, r.Headers); err != nil {
		return nil, fmt.Errorf("%w: http request to %q: %w", ErrBadRequest, req.URL.Redacted(), err)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.requestError(ctx, req.URL, err)
	}
	defer resp.Body.Close()
	where := resp.Request.URL.Redacted()
	if resp.ContentLength > c.maxBytes {
		return nil, c.tooLarge(where, fmt.Sprintf("content-length is %d", resp.ContentLength))
	}
	limit := c.maxBytes
	if limit < math.MaxInt64 {
		limit++
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		// Trust a declared length only so far: a server may lie.
		buf.Grow(int(min(resp.ContentLength, maxPrealloc)))
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit)); err != nil {
		return nil, c.requestError(ctx, resp.Request.URL, err)
	}
	if int64(buf.Len()) > c.maxBytes {
		return nil, c.tooLarge(where, "the body is longer")
	}
	out := &Response{Status: resp.StatusCode, Headers: make(map[string]string, len(resp.Header)), Body: buf.Bytes()}
	for k, vs := range resp.Header {
		k = strings.ToLower(k)
		if prev, ok := out.Headers[k]; ok {
			out.Headers[k] = prev + "," + strings.Join(vs, ",")
		} else {
			out.Headers[k] = strings.Join(vs, ",")
		}
	}
	return out, nil
}

func (c *Client) tooLarge(where, detail string) error {
	return fmt.Errorf("%w: response from %q exceeds max_response_bytes (%d): %s", ErrResponseTooLarge, where, c.maxBytes, detail)
}

// requestError turns an error from http.Client into ours: refusals come back
// as they were made, naming the hop's URL; anything else names the URL and,
// when the context ended, matches its error.
func (c *Client) requestError(ctx context.Context, u *url.URL, err error) error {
	where := u.Redacted()
	var ue *url.Error
	if errors.As(err, &ue) {
		where, err = ue.URL, ue.Err
	}
	var de *DeniedError
	if errors.As(err, &de) {
		cp := *de
		if cp.URL == "" {
			cp.URL = where
		}
		return &cp
	}
	for _, sentinel := range []error{ErrTooManyRedirects, ErrBadRequest} {
		if errors.Is(err, sentinel) {
			return err
		}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("http request to %q: %w: %w", where, cerr, err)
	}
	return fmt.Errorf("http request to %q: %w", where, err)
}

// checkURL judges a request or redirect URL before anything is sent: scheme,
// host syntax, AllowedHosts, and, without AllowPrivate, IP literals and
// local-only names. from is the previous hop of a redirect, or "".
func (c *Client) checkURL(u *url.URL, from string) error {
	what := "http request to"
	suffix := ""
	if from != "" {
		what = fmt.Sprintf("http redirect from %q to", from)
		suffix = fmt.Sprintf(" (redirected from %q)", from)
	}
	where := u.Redacted()
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: %s %q: scheme %q is not allowed; want http or https", ErrBadRequest, what, where, u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return fmt.Errorf("%w: %s %q: the url has no host; want http://host/ or https://host/", ErrBadRequest, what, where)
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return fmt.Errorf("%w: %s %q: port %q is not a number from 0 to 65535", ErrBadRequest, what, where, p)
		}
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return fmt.Errorf("%w: %s %q: the url has no host; want http://host/ or https://host/", ErrBadRequest, what, where)
	}
	if !isASCII(host) {
		return fmt.Errorf("%w: %s %q: host %q is not ascii; use its punycode (xn--) form", ErrBadRequest, what, where, host)
	}
	ip, ipErr := netip.ParseAddr(host)
	if ipErr != nil && endsInNumber(host) {
		return fmt.Errorf("%w: %s %q: host %q is neither a hostname nor a canonical ip address; want a dns name or a dotted-quad ipv4 address", ErrBadRequest, what, where, host)
	}
	if ipErr != nil && hasEmptyLabel(host) {
		return fmt.Errorf("%w: %s %q: host %q has an empty label; want a dns name such as api.example.com", ErrBadRequest, what, where, u.Hostname())
	}
	if !c.HostAllowed(host) {
		return hostNotAllowed(where, host, suffix)
	}
	if c.allowPrivate {
		return nil
	}
	if ipErr == nil {
		if r := deniedReason(ip); r != "" {
			return addressDenied(where, host, fmt.Sprintf("host %q is %s", host, r))
		}
	} else if r := deniedName(host); r != "" {
		return addressDenied(where, host, fmt.Sprintf("host %q is %s", host, r))
	}
	return nil
}

// sensitiveHeaders are dropped once a redirect chain leaves the first
// request's host:port.
var sensitiveHeaders = []string{
	"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "Www-Authenticate", "Proxy-Authenticate",
}

// checkRedirect is the http.Client CheckRedirect hook. net/http has already
// copied the first request's headers into req.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	prev := via[len(via)-1]
	from := prev.URL.Redacted()
	if len(via) > c.maxRedirects {
		return fmt.Errorf("%w: http request to %q stopped at redirect %d to %q (max_redirects is %d)",
			ErrTooManyRedirects, via[0].URL.Redacted(), len(via), req.URL.Redacted(), c.maxRedirects)
	}
	if prev.URL.Scheme == "https" && req.URL.Scheme == "http" {
		return fmt.Errorf("%w: http redirect from %q to %q refused: it downgrades https to http",
			ErrBadRequest, from, req.URL.Redacted())
	}
	if err := c.checkURL(req.URL, from); err != nil {
		return err
	}
	first := via[0]
	if slices.ContainsFunc(append(via[1:len(via):len(via)], req), func(r *http.Request) bool {
		return !strings.EqualFold(canonicalHostPort(r.URL), canonicalHostPort(first.URL))
	}) {
		for _, h := range sensitiveHeaders {
			req.Header.Del(h)
		}
	}
	if first.Header.Get("Referer") == "" {
		req.Header.Del("Referer")
	}
	return nil
}

// canonicalHostPort returns u's host with the scheme's default port made
// explicit, so "a.test" and "a.test:80" compare equal over http.
func canonicalHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(normalizeHost(u.Hostname()), port)
}

// checkMethod returns the uppercased method, GET for "".
func checkMethod(m string) (string, error) {
	if m == "" {
		return http.MethodGet, nil
	}
	m = strings.ToUpper(m)
	if !isToken(m) {
		return "", fmt.Errorf("method %q is not a valid http method token", m)
	}
	if m == http.MethodConnect {
		return "", errors.New("method CONNECT is not allowed; want GET, POST or another method")
	}
	return m, nil
}

// setHeaders validates the guest's headers and adds them to req in sorted
// order, so that names differing only in case combine deterministically.
func setHeaders(req *http.Request, hs map[string]string) error {
	keys := make([]string, 0, len(hs))
	for k := range hs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := hs[k]
		if !isToken(k) {
			return fmt.Errorf("header name %q is not a valid http token", k)
		}
		if !validHeaderValue(v) {
			return fmt.Errorf("header %q has a control character in its value", k)
		}
		if strings.EqualFold(k, "Host") {
			if !strings.EqualFold(v, req.URL.Host) && normalizeHost(v) != normalizeHost(req.URL.Hostname()) {
				return fmt.Errorf("header host %q differs from the url's host %q; leave it out", v, req.URL.Host)
			}
			continue
		}
		req.Header.Add(k, v)
	}
	return nil
}

// normalizeHost lowercases a hostname, drops IPv6 brackets and one trailing
// dot.
func normalizeHost(h string) string {
	h = strings.ToLower(h)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.TrimSuffix(h, ".")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v has no control characters but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}
