package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// The tests of this file hold each layer of the guard to its own rule,
// where two layers enforce one (the URL check before a request is sent,
// the dial hook on what the Transport asks for): each must refuse on its
// own, so that taking one out fails a test.

// A redirect target is judged by its name before anything resolves it: a
// host that is a number in disguise (2130706433 is 127.0.0.1) or has an
// empty label is a bad request even with AllowedHosts "*", and is never
// looked up or dialed.
func TestRedirectTargetJudgedByName(t *testing.T) {
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
	for _, tgt := range []string{
		"http://2130706433/",
		"http://2130706433:" + a.port() + "/",
		"http://0x7f000001/",
		"http://0x7f.1/",
		"http://127.1/",
		"http://0177.0.0.1/",
		"http://public.test..:" + a.port() + "/",
		"http://.public.test/",
	} {
		target = tgt
		if _, err := c.Do(context.Background(), Request{URL: a.at("a.test", "/")}); kindOf(err) != "ErrBadRequest" {
			t.Errorf("redirect to %q: %v; want ErrBadRequest", tgt, err)
		}
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
	if hits := a.hits.Load(); hits == 0 {
		t.Error("the first hop was never made: the redirects were not tested")
	}
}

// The Transport's dial hook judges the host against AllowedHosts itself,
// whatever the URL check said: a host that no glob matches, named or an
// address, is refused before any lookup or dial.
func TestDialerRefusesHostsNotAllowed(t *testing.T) {
	n := &strictNet{t: t, hosts: map[string][]netip.Addr{"a.test": addrs("1.2.3.4")}}
	for _, private := range []bool{false, true} {
		c := mustClient(t, Policy{AllowedHosts: []string{"a.test"}, AllowPrivate: private}, n.options())
		for _, addr := range []string{
			"b.test:80", "sub.a.test:443", "a.test.evil:80", "1.2.3.4:80", "[2606:4700::1111]:443", "127.0.0.1:80", "localhost:80",
		} {
			if _, err := c.dialContext(context.Background(), "tcp", addr); kindOf(err) != "ErrHostNotAllowed" {
				t.Errorf("AllowPrivate %v: dialContext(%q) = %v; want ErrHostNotAllowed", private, addr, err)
			}
		}
	}
	if lookups, dials := n.seen(); len(lookups)+len(dials) != 0 {
		t.Errorf("lookups %q, dials %q; want none", lookups, dials)
	}
}

// Local names and special addresses in a request's URL are refused by the
// URL check, before the Transport is asked to dial at all (where the dial
// hook would refuse them again).
func TestLocalNamesRefusedBeforeTheTransportDials(t *testing.T) {
	n := &strictNet{t: t}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, n.options())
	var mu sync.Mutex
	var asked []string
	hook := c.transport.DialContext
	c.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		asked = append(asked, addr)
		mu.Unlock()
		return hook(ctx, network, addr)
	}
	urls := append([]struct{ url, kind string }(nil), localURLs...)
	urls = append(urls,
		struct{ url, kind string }{"http://169.254.169.254/latest/meta-data/", "ErrAddressDenied"},
		struct{ url, kind string }{"http://metadata.google.internal/", "ErrAddressDenied"},
		struct{ url, kind string }{"http://10.0.0.1/", "ErrAddressDenied"},
		struct{ url, kind string }{"http://printer.local/", "ErrAddressDenied"},
	)
	for _, tt := range urls {
		if _, err := c.Do(context.Background(), Request{URL: tt.url}); kindOf(err) != tt.kind {
			t.Errorf("Do(%q) = %v; want %s", tt.url, err, tt.kind)
		}
	}
	if len(asked) > 0 {
		t.Errorf("the Transport was asked to dial %s", strings.Join(asked, ", "))
	}
	if lookups, dials := n.seen(); len(lookups)+len(dials) != 0 {
		t.Errorf("lookups %q, dials %q; want none", lookups, dials)
	}
}
