package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strictNet is a resolver and dialer for tests that must not resolve or dial
// some hosts: asking for one of them fails the test. Other hosts resolve
// through hosts, and dials go through routes (or to loopback as they are,
// with passthrough).
type strictNet struct {
	t           *testing.T
	hosts       map[string][]netip.Addr
	routes      map[string]string
	passthrough bool

	mu      sync.Mutex
	lookups []string
	dials   []string
}

func (n *strictNet) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	n.lookups = append(n.lookups, host)
	n.mu.Unlock()
	if a, ok := n.hosts[host]; ok {
		return a, nil
	}
	n.t.Errorf("DNS lookup of %q; local names must never be looked up", host)
	return nil, &net.DNSError{Err: "refused by the test", Name: host}
}

func (n *strictNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	n.dials = append(n.dials, addr)
	n.mu.Unlock()
	if r, ok := n.routes[addr]; ok {
		addr = r
	} else if !n.passthrough {
		n.t.Errorf("dial of %q", addr)
		return nil, errNoRoute
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (n *strictNet) options() options { return options{lookup: n.lookup, dialAddr: n.dial} }

func (n *strictNet) seen() (lookups, dials []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.lookups...), append([]string(nil), n.dials...)
}

// localURLs are spellings of loopback names and addresses, each with the
// error kind a request to it must get without AllowPrivate; they are never
// looked up or dialed.
var localURLs = []struct{ url, kind string }{
	{"http://localhost/", "ErrAddressDenied"},
	{"http://localhost./", "ErrAddressDenied"},
	{"http://LOCALHOST./", "ErrAddressDenied"},
	{"http://LocalHost:8080/x", "ErrAddressDenied"},
	{"http://localhost.:8080/x", "ErrAddressDenied"},
	{"https://localhost.:443/", "ErrAddressDenied"},
	{"http://user:secret@localhost./", "ErrAddressDenied"},
	{"http://user@LOCALHOST.:1/", "ErrAddressDenied"},
	{"http://allowed.test@localhost/", "ErrAddressDenied"},
	{"http://a.localhost/", "ErrAddressDenied"},
	{"http://a.b.localhost./", "ErrAddressDenied"},
	{"http://A.B.LOCALHOST.:9999/", "ErrAddressDenied"},
	// Empty labels: no DNS name has them, and they would pass the name
	// checks ("localhost.." is "localhost." once one dot is dropped).
	{"http://localhost../", "ErrBadRequest"},
	{"http://LOCALHOST...:80/", "ErrBadRequest"},
	{"http://.localhost/", "ErrBadRequest"},
	{"http://a..localhost/", "ErrBadRequest"},
	{"http://a.localhost../", "ErrBadRequest"},
	// Addresses are refused as addresses.
	{"http://[::1]/", "ErrAddressDenied"},
	{"http://[::1]:8080/", "ErrAddressDenied"},
	{"http://user:pw@[::1]:8080/", "ErrAddressDenied"},
	{"http://[0:0:0:0:0:0:0:1]/", "ErrAddressDenied"},
	{"http://[::ffff:127.0.0.1]/", "ErrAddressDenied"},
	{"http://[::1%25lo]/", "ErrAddressDenied"},
	{"http://[::]/", "ErrAddressDenied"},
	{"http://127.0.0.1./", "ErrAddressDenied"},
}

// TestLocalNamesNeverLookedUp: without AllowPrivate, every spelling of a
// loopback name is refused before any DNS query or connection, whatever
// AllowedHosts says.
func TestLocalNamesNeverLookedUp(t *testing.T) {
	for _, allowed := range [][]string{{"*"}, {"localhost", "*.localhost", "::1", "*"}} {
		n := &strictNet{t: t}
		c := mustClient(t, Policy{AllowedHosts: allowed}, n.options())
		for _, tt := range localURLs {
			_, err := c.Do(context.Background(), Request{URL: tt.url})
			if got := kindOf(err); got != tt.kind {
				t.Errorf("AllowedHosts %q: Do(%q) = %v (%s), want %s", allowed, tt.url, err, got, tt.kind)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("Do(%q) error shows the password: %v", tt.url, err)
			}
		}
		if lookups, dials := n.seen(); len(lookups)+len(dials) != 0 {
			t.Errorf("lookups %q, dials %q; want none", lookups, dials)
		}
	}
}

// TestDialLocalNamesNeverLookedUp runs the Transport's dial hook itself on
// local names: it refuses them before any lookup too.
func TestDialLocalNamesNeverLookedUp(t *testing.T) {
	n := &strictNet{t: t}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, n.options())
	for _, tt := range []struct{ addr, kind string }{
		{"localhost:80", "ErrAddressDenied"},
		{"LOCALHOST.:80", "ErrAddressDenied"},
		{"a.b.localhost.:443", "ErrAddressDenied"},
		{"localhost..:80", "ErrBadRequest"},
		{".localhost:80", "ErrBadRequest"},
		{"[::1]:80", "ErrAddressDenied"},
	} {
		if _, err := c.dialContext(context.Background(), "tcp", tt.addr); kindOf(err) != tt.kind {
			t.Errorf("dialContext(%q) = %v, want %s", tt.addr, err, tt.kind)
		}
	}
	if lookups, dials := n.seen(); len(lookups)+len(dials) != 0 {
		t.Errorf("lookups %q, dials %q; want none", lookups, dials)
	}
}

// TestRedirectToLocalNames: a redirect to any of those spellings is refused
// before it is looked up or dialed, and the loopback server never sees it.
func TestRedirectToLocalNames(t *testing.T) {
	inside := newServer(t, ok)
	var target string
	a := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	n := &strictNet{
		t:      t,
		hosts:  map[string][]netip.Addr{"a.test": addrs("1.2.3.4")},
		routes: map[string]string{"1.2.3.4:" + a.port(): a.Listener.Addr().String()},
	}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, n.options())
	for _, tt := range localURLs {
		// The same spellings, pointed at the inside server's port.
		target = strings.Replace(tt.url, "/x", "/", 1)
		if u, p, ok := strings.Cut(target, ":8080"); ok {
			target = u + ":" + inside.port() + p
		}
		_, err := c.Do(context.Background(), Request{URL: a.at("a.test", "/")})
		if got := kindOf(err); got != tt.kind {
			t.Errorf("redirect to %q: %v (%s), want %s", target, err, got, tt.kind)
		}
	}
	if hits := inside.hits.Load(); hits != 0 {
		t.Errorf("the inside server saw %d requests", hits)
	}
	lookups, dials := n.seen()
	for _, l := range lookups {
		if l != "a.test" {
			t.Errorf("looked up %q", l)
		}
	}
	for _, d := range dials {
		if d != "1.2.3.4:"+a.port() {
			t.Errorf("dialed %q", d)
		}
	}
}

// TestLocalhostWithAllowPrivate: with AllowPrivate, loopback names reach
// the loopback interface, still without a lookup; names with empty labels
// stay refused.
func TestLocalhostWithAllowPrivate(t *testing.T) {
	srv := newServer(t, ok)
	n := &strictNet{t: t, passthrough: true}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}, AllowPrivate: true}, n.options())
	for _, host := range []string{"localhost", "localhost.", "LOCALHOST.", "app.localhost", "A.B.LocalHost."} {
		resp, err := c.Do(context.Background(), Request{URL: srv.at(host, "/")})
		if err != nil || string(resp.Body) != "ok" {
			t.Errorf("Do(%s) with AllowPrivate = %v, %v", host, resp, err)
		}
	}
	if _, err := c.Do(context.Background(), Request{URL: srv.at("localhost..", "/")}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Do(localhost..) with AllowPrivate = %v, want ErrBadRequest", err)
	}
	lookups, dials := n.seen()
	if len(lookups) != 0 {
		t.Errorf("lookups %q; want none", lookups)
	}
	for _, d := range dials {
		if d != "127.0.0.1:"+srv.port() {
			t.Errorf("dialed %q, want the loopback address", d)
		}
	}
	if len(dials) == 0 {
		t.Error("nothing was dialed")
	}
}

func TestLocalNameHelpers(t *testing.T) {
	loopback := map[string]bool{
		"localhost": true, "localhost.": true, "localhost..": true, "a.localhost": true, "a.b.localhost.": true,
		"localhost.example.com": false, "notlocalhost": false, "localhostx": false, "example.com": false,
	}
	empty := map[string]bool{
		".localhost": true, "a..b": true, "localhost.": true, "a.": true, ".": true,
		"localhost": false, "a.b.c": false, "": false,
	}
	gotLoopback, gotEmpty := map[string]bool{}, map[string]bool{}
	for h := range loopback {
		gotLoopback[h] = isLoopbackName(h)
	}
	for h := range empty {
		gotEmpty[h] = hasEmptyLabel(h)
	}
	if diff := cmp.Diff(loopback, gotLoopback); diff != "" {
		t.Errorf("isLoopbackName (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(empty, gotEmpty); diff != "" {
		t.Errorf("hasEmptyLabel (-want +got):\n%s", diff)
	}
	for _, h := range []string{"localhost.", "a.localhost..", "metadata.google.internal."} {
		if deniedName(h) == "" {
			t.Errorf("deniedName(%q) allows it", h)
		}
	}
}
