package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The edges of the guard's rules, each found by `make mutate` as a
// change no test noticed: the bytes at a bound, the defaults a Client
// starts with, and the failures that must not pass as a response.

// countDials counts the addresses c's Transport is asked to dial.
func countDials(c *Client) *atomic.Int32 {
	var n atomic.Int32
	hook := c.transport.DialContext
	c.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		return hook(ctx, network, addr)
	}
	return &n
}

// HostAllowed refuses an empty host and one that is not ASCII even to the
// pattern "*", which matches any string.
func TestHostAllowedRefusesEmptyAndNonASCII(t *testing.T) {
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, options{})
	for _, h := range []string{"", ".", "bücher.example", "a\x80b", "\x80", "\xff.example"} {
		if c.HostAllowed(h) {
			t.Errorf("HostAllowed(%q) with * = true, want false", h)
		}
	}
	for _, h := range []string{"a.test", "xn--bcher-kva.example", "A.TEST."} {
		if !c.HostAllowed(h) {
			t.Errorf("HostAllowed(%q) with * = false, want true", h)
		}
	}
}

// NewClient sets the resolver and the dialer a Client checks addresses
// with; a Client without them could not resolve a name at all.
func TestNewClientDefaultsResolverAndDialer(t *testing.T) {
	c := mustClient(t, Policy{}, options{})
	if c.lookup == nil || c.dialAddr == nil {
		t.Fatal("NewClient left the resolver or the dialer unset")
	}
	if c.transport.TLSClientConfig == nil || c.transport.TLSClientConfig.MinVersion < tls.VersionTLS12 {
		t.Errorf("TLS configuration %+v: want TLS 1.2 at least", c.transport.TLSClientConfig)
	}
}

// A nil context is a bad request, not a response.
func TestDoNilContext(t *testing.T) {
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, options{})
	var noCtx context.Context
	if resp, err := c.Do(noCtx, Request{URL: "http://a.test/"}); !errors.Is(err, ErrBadRequest) || resp != nil {
		t.Errorf("Do(nil context) = %+v, %v; want ErrBadRequest", resp, err)
	}
}

// The URL check refuses before the Transport is asked to dial: a host not
// on the list, a port past 65535 (which the dial hook would refuse again)
// and a URL with a port but no host name.
func TestURLCheckRefusesBeforeTheTransportDials(t *testing.T) {
	n := &strictNet{t: t}
	c := mustClient(t, Policy{AllowedHosts: []string{"a.test"}}, n.options())
	dials := countDials(c)
	for _, tt := range []struct{ url, kind string }{
		{"http://b.test/", "ErrHostNotAllowed"},
		{"http://sub.a.test/", "ErrHostNotAllowed"},
		{"http://1.2.3.4/", "ErrHostNotAllowed"},
		{"http://a.test:99999/", "ErrBadRequest"},
		{"http://a.test:65536/", "ErrBadRequest"},
		{"http://:80/", "ErrBadRequest"},
	} {
		if _, err := c.Do(context.Background(), Request{URL: tt.url}); kindOf(err) != tt.kind {
			t.Errorf("Do(%q) = %v; want %s", tt.url, err, tt.kind)
		}
	}
	if got := dials.Load(); got != 0 {
		t.Errorf("the Transport was asked to dial %d times", got)
	}
	if lookups, d := n.seen(); len(lookups)+len(d) != 0 {
		t.Errorf("lookups %q, dials %q; want none", lookups, d)
	}
}

// The dial hook refuses on its own what the URL check refuses: an
// address that is no host:port, a port past 65535, and local names
// beyond localhost, all before any lookup. A name that resolves to
// nothing, or not at all, is an error, never a connection.
func TestDialHookOnItsOwn(t *testing.T) {
	n := &strictNet{t: t, hosts: map[string][]netip.Addr{"a.test": addrs("1.2.3.4"), "empty.test": {}}}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, n.options())
	for _, tt := range []struct{ addr, kind string }{
		{"a.test", "ErrBadRequest"},
		{"a.test:99999", "ErrBadRequest"},
		{"a.test:-1", "ErrBadRequest"},
		{"a.test:http", "ErrBadRequest"},
		{"printer.local:80", "ErrAddressDenied"},
		{"metadata.google.internal:80", "ErrAddressDenied"},
		{"db.internal:5432", "ErrAddressDenied"},
		{"router.home.arpa:80", "ErrAddressDenied"},
	} {
		if conn, err := c.dialContext(context.Background(), "tcp", tt.addr); kindOf(err) != tt.kind || conn != nil {
			t.Errorf("dialContext(%q) = %v; want %s", tt.addr, err, tt.kind)
		}
	}
	if lookups, dials := n.seen(); len(lookups)+len(dials) != 0 {
		t.Errorf("lookups %q, dials %q; want none", lookups, dials)
	}
	fn := &fakeNet{hosts: map[string][]netip.Addr{"empty.test": {}}}
	c = mustClient(t, Policy{AllowedHosts: []string{"*"}}, fn.options())
	for _, addr := range []string{"empty.test:80", "nx.test:80"} {
		if conn, err := c.dialContext(context.Background(), "tcp", addr); err == nil || conn != nil {
			t.Errorf("dialContext(%q) = %v, %v; want an error", addr, conn, err)
		}
	}
	if _, dials := fn.counts(); len(dials) != 0 {
		t.Errorf("dialed %q", dials)
	}
}

// A refusal made when dialing names the URL of the hop it refused: the
// request's, or the redirect's.
func TestDialTimeRefusalNamesTheHop(t *testing.T) {
	inside := newServer(t, ok)
	var target string
	a := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	fn := &fakeNet{
		hosts:  map[string][]netip.Addr{"a.test": addrs("1.2.3.4"), "rebind.test": addrs("127.0.0.1")},
		routes: map[string]string{"1.2.3.4:" + a.port(): a.Listener.Addr().String()},
	}
	c := mustClient(t, Policy{AllowedHosts: []string{"*.test"}}, fn.options())
	target = inside.at("rebind.test", "/in")
	for _, u := range []string{inside.at("rebind.test", "/first"), a.at("a.test", "/")} {
		_, err := c.Do(context.Background(), Request{URL: u})
		var de *DeniedError
		if !errors.As(err, &de) || !errors.Is(err, ErrAddressDenied) {
			t.Fatalf("Do(%q) = %v; want a *DeniedError matching ErrAddressDenied", u, err)
		}
		want := u
		if strings.Contains(u, "a.test") {
			want = target
		}
		if de.URL != want || de.Host != "rebind.test" {
			t.Errorf("Do(%q): DeniedError URL %q host %q; want URL %q host rebind.test", u, de.URL, de.Host, want)
		}
	}
	if hits := inside.hits.Load(); hits != 0 {
		t.Errorf("the inside server saw %d requests", hits)
	}
}

// A response whose declared length passes the cap is refused before its
// body is read: here the body never comes.
func TestDeclaredLengthRefusedBeforeTheBody(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte("0123456789"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true, MaxResponseBytes: 100, Timeout: 10 * time.Second}, options{})
	if _, err := c.Do(context.Background(), Request{URL: srv.at("127.0.0.1", "/")}); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("Do = %v; want ErrResponseTooLarge", err)
	}
}

// The largest cap there is still reads the whole body.
func TestLargestResponseCap(t *testing.T) {
	srv := newServer(t, ok)
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true, MaxResponseBytes: math.MaxInt64}, options{})
	resp, err := c.Do(context.Background(), Request{URL: srv.at("127.0.0.1", "/")})
	if err != nil || string(resp.Body) != "ok" {
		t.Errorf("Do = %+v, %v; want the body ok", resp, err)
	}
}

// A body cut short by the server is an error, not a shorter response.
func TestTruncatedBodyIsAnError(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
		_ = buf.Flush()
		_ = conn.Close()
	})
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true}, options{})
	if resp, err := c.Do(context.Background(), Request{URL: srv.at("127.0.0.1", "/")}); err == nil {
		t.Errorf("Do = %q; want an error for the body cut short", resp.Body)
	}
}

// Credentials follow a redirect to the same host and port, the scheme's
// default port written out or not, and are dropped when the scheme's
// upgrade moves the request to another port.
func TestRedirectCredentialsAtDefaultPorts(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}
	plain := newServer(t, redirectOr(http.HandlerFunc(record)))
	secure := httptest.NewTLSServer(http.HandlerFunc(record))
	t.Cleanup(secure.Close)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	// example.com is a name the test certificate holds.
	fn := &fakeNet{
		hosts: map[string][]netip.Addr{"example.com": addrs("1.2.3.4")},
		routes: map[string]string{
			"1.2.3.4:80":  plain.Listener.Addr().String(),
			"1.2.3.4:443": secure.Listener.Addr().String(),
		},
	}
	o := fn.options()
	o.tlsConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	c := mustClient(t, Policy{AllowedHosts: []string{"example.com"}}, o)
	for _, tt := range []struct {
		to, want string
	}{
		{"http://example.com:80/x", "Bearer s3cret"},
		{"http://example.com/x", "Bearer s3cret"},
		{"https://example.com/x", ""},
		{"https://example.com:443/x", ""},
	} {
		mu.Lock()
		auth = nil
		mu.Unlock()
		u := "http://example.com/?to=" + url.QueryEscape(tt.to)
		if _, err := c.Do(context.Background(), Request{URL: u, Headers: map[string]string{"Authorization": "Bearer s3cret"}}); err != nil {
			t.Fatalf("redirect to %s: %v", tt.to, err)
		}
		mu.Lock()
		got := auth
		mu.Unlock()
		if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
			t.Errorf("redirect to %s: Authorization at the target (-want +got):\n%s", tt.to, diff)
		}
	}
}

// Header names are tokens, byte for byte at the edges of each range;
// values may hold tabs but no other control character. What is refused
// is a bad request and never sent.
func TestHeaderEdges(t *testing.T) {
	srv := newServer(t, ok)
	fn := &fakeNet{hosts: map[string][]netip.Addr{"a.test": addrs("127.0.0.1")}, passthrough: true}
	c := mustClient(t, Policy{AllowedHosts: []string{"a.test"}, AllowPrivate: true}, fn.options())
	good := srv.at("a.test", "/")
	for _, h := range []map[string]string{
		{"Z-Upper": "v"}, {"a-z": "v"}, {"X0": "v"}, {"X9": "v"}, {"0x": "v"}, {"!x": "v"}, {"x~": "v"}, {"x|": "v"},
		{"X-Tab": "a\tb"}, {"X-Obs": "caf\xc3\xa9"},
		{"Host": "A.TEST."}, {"Host": "a.test:" + srv.port()},
	} {
		if _, err := c.Do(context.Background(), Request{URL: good, Headers: h}); err != nil {
			t.Errorf("headers %q: %v", h, err)
		}
	}
	before := srv.hits.Load()
	for _, h := range []map[string]string{
		{"": "v"}, {"a{": "v"}, {"x[": "v"}, {"x@": "v"}, {"x/": "v"}, {"x:": "v"}, {"X Y": "v"}, {"é": "v"}, {"x\x7f": "v"},
		{"X-Del": "a\x7fb"}, {"X-Nl": "a\nb"}, {"X-Cr": "a\rb"}, {"X-Nul": "a\x00b"}, {"X-Esc": "\x1b"},
		{"Host": "a.test:1"},
	} {
		if _, err := c.Do(context.Background(), Request{URL: good, Headers: h}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("headers %q: %v; want ErrBadRequest", h, err)
		}
	}
	if n := srv.hits.Load() - before; n != 0 {
		t.Errorf("the server saw %d refused requests", n)
	}
}

// A last label of digits is a number at every digit, and only digits
// (or 0x and hex digits) make one.
func TestEndsInNumberEdges(t *testing.T) {
	for h, want := range map[string]bool{
		"9": true, "0": true, "2130706439": true, "a.19": true, "a.0x9": true,
		"a.1-2": false, "a.1/2": false, "a.1:2": false, "a.9a": false, "a.1 2": false,
	} {
		if got := endsInNumber(h); got != want {
			t.Errorf("endsInNumber(%q) = %v, want %v", h, got, want)
		}
	}
}
