package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// errNoRoute is what fakeNet returns for a dial it has no route for.
var errNoRoute = errors.New("fakenet: no route (tests never leave loopback)")

// fakeNet replaces DNS and the dialer in tests, records what was asked, and
// never reaches anything but loopback.
type fakeNet struct {
	// hosts maps hostnames to the addresses lookup returns.
	hosts map[string][]netip.Addr
	// routes maps a dialed "ip:port" to the loopback "ip:port" really dialed.
	routes map[string]string
	// passthrough dials unrouted addresses as they are (loopback servers).
	passthrough bool

	mu      sync.Mutex
	lookups []string
	dials   []string
}

func (f *fakeNet) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	f.lookups = append(f.lookups, host)
	f.mu.Unlock()
	if a, ok := f.hosts[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dials = append(f.dials, addr)
	f.mu.Unlock()
	if r, ok := f.routes[addr]; ok {
		addr = r
	} else if !f.passthrough {
		return nil, errNoRoute
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (f *fakeNet) counts() (lookups, dials []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lookups), slices.Clone(f.dials)
}

func (f *fakeNet) options() options {
	return options{lookup: f.lookup, dialAddr: f.dial}
}

// addrs parses addresses for fakeNet.hosts.
func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// server is an httptest server on loopback that counts requests.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// port returns the server's port.
func (s *server) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

// at returns a URL for the server under another hostname.
func (s *server) at(host, path string) string {
	return "http://" + net.JoinHostPort(host, s.port()) + path
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

func mustClient(t *testing.T, p Policy, o options) *Client {
	t.Helper()
	c, err := newClient(p, o)
	if err != nil {
		t.Fatalf("newClient(%+v): %v", p, err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// kindOf names the sentinel err matches, for table comparisons.
func kindOf(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{ErrBadPolicy, "ErrBadPolicy"},
		{ErrHostNotAllowed, "ErrHostNotAllowed"},
		{ErrAddressDenied, "ErrAddressDenied"},
		{ErrResponseTooLarge, "ErrResponseTooLarge"},
		{ErrTooManyRedirects, "ErrTooManyRedirects"},
		{ErrBadRequest, "ErrBadRequest"},
		{context.Canceled, "context.Canceled"},
		{context.DeadlineExceeded, "context.DeadlineExceeded"},
		{errNoRoute, "errNoRoute"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	if err != nil {
		return "other: " + strings.SplitN(err.Error(), "\n", 2)[0]
	}
	return ""
}
