package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewClientBadPolicy(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
	}{
		{"unclosed class", Policy{AllowedHosts: []string{"ok.test", "[a-"}}},
		{"empty glob", Policy{AllowedHosts: []string{""}}},
		{"only a dot", Policy{AllowedHosts: []string{"."}}},
		{"negative max response bytes", Policy{MaxResponseBytes: -1}},
		{"negative max redirects", Policy{MaxRedirects: -1}},
		{"negative timeout", Policy{Timeout: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.p)
			if !errors.Is(err, ErrBadPolicy) || c != nil {
				t.Fatalf("NewClient(%+v) = %v, %v; want nil, ErrBadPolicy", tt.p, c, err)
			}
			t.Log(err)
		})
	}
}

func TestNewClientDefaults(t *testing.T) {
	c, err := NewClient(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		MaxBytes      int64
		MaxRedirects  int
		ProxyIsNil    bool
		OwnTransport  bool
		OwnClient     bool
		AllowsAnyHost bool
	}
	want := view{DefaultMaxResponseBytes, DefaultMaxRedirects, true, true, true, false}
	got := view{
		MaxBytes:      c.maxBytes,
		MaxRedirects:  c.maxRedirects,
		ProxyIsNil:    c.transport.Proxy == nil,
		OwnTransport:  c.hc.Transport == c.transport && c.transport != http.DefaultTransport,
		OwnClient:     c.hc != http.DefaultClient,
		AllowsAnyHost: c.HostAllowed("example.com"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestHostAllowed(t *testing.T) {
	c := mustClient(t, Policy{AllowedHosts: []string{
		"api.example.com", "*.example.org", "Mixed.CASE.test", "svc-?.test", "{a,b}.multi.test", "::1", "10.1.2.3", "dotted.test.",
	}}, options{})
	tests := []struct {
		host string
		want bool
	}{
		{"api.example.com", true},
		{"API.Example.COM", true},
		{"api.example.com.", true},
		{"[api.example.com]", true},
		{"example.com", false},
		{"x.api.example.com", false},
		{"api.example.com.evil.test", false},
		{"evilapi.example.com", false},
		{"a.example.org", true},
		{"a.b.c.example.org", true},
		{"example.org", false},
		{"example.org.evil.test", false},
		{"mixed.case.test", true},
		{"svc-1.test", true},
		{"svc-12.test", false},
		{"a.multi.test", true},
		{"c.multi.test", false},
		{"::1", true},
		{"[::1]", true},
		{"10.1.2.3", true},
		{"10.1.2.30", false},
		{"dotted.test", true},
		{"", false},
		{".", false},
		{"api.example.com:443", false},
		{"аpi.example.com", false}, // Cyrillic а
		{"x.example.org\x00", false},
		{"evil.com", false},
	}
	got := map[string]bool{}
	want := map[string]bool{}
	for _, tt := range tests {
		want[tt.host] = tt.want
		got[tt.host] = c.HostAllowed(tt.host)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HostAllowed (-want +got):\n%s", diff)
	}

	star := mustClient(t, Policy{AllowedHosts: []string{"*"}}, options{})
	for _, h := range []string{"a", "a.b.c.d.e", "127.0.0.1", "::ffff:127.0.0.1"} {
		if !star.HostAllowed(h) {
			t.Errorf(`"*" does not allow %q`, h)
		}
	}
	none := mustClient(t, Policy{}, options{})
	if none.HostAllowed("a") {
		t.Error("an empty AllowedHosts allows a host")
	}
}

// TestAllowedDenied runs allowed/denied pairs against a loopback server and
// checks that refused requests never reach it.
func TestAllowedDenied(t *testing.T) {
	srv := newServer(t, ok)
	tests := []struct {
		name         string
		p            Policy
		hosts        map[string][]netip.Addr
		url          string
		wantKind     string
		wantHits     int32
		wantDeniedAt string // DeniedError.Host
	}{
		{
			name: "allowed literal with AllowPrivate", p: Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true},
			url: srv.at("127.0.0.1", "/"), wantHits: 1,
		},
		{
			name: "allowed name with AllowPrivate", p: Policy{AllowedHosts: []string{"*.test"}, AllowPrivate: true},
			hosts: map[string][]netip.Addr{"a.test": addrs("127.0.0.1")}, url: srv.at("a.test", "/"), wantHits: 1,
		},
		{
			name: "host not in allowed_hosts", p: Policy{AllowedHosts: []string{"other.test"}, AllowPrivate: true},
			url: srv.at("127.0.0.1", "/"), wantKind: "ErrHostNotAllowed", wantDeniedAt: "127.0.0.1",
		},
		{
			name: "empty allowed_hosts", p: Policy{AllowPrivate: true},
			url: srv.at("127.0.0.1", "/"), wantKind: "ErrHostNotAllowed", wantDeniedAt: "127.0.0.1",
		},
		{
			name: "loopback literal without AllowPrivate", p: Policy{AllowedHosts: []string{"*", "127.0.0.1"}},
			url: srv.at("127.0.0.1", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "127.0.0.1",
		},
		{
			name: "localhost without AllowPrivate", p: Policy{AllowedHosts: []string{"*"}},
			url: srv.at("localhost", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "localhost",
		},
		{
			name: "LOCALHOST. without AllowPrivate", p: Policy{AllowedHosts: []string{"*"}},
			url: srv.at("LOCALHOST.", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "localhost",
		},
		{
			name: "ipv6 loopback", p: Policy{AllowedHosts: []string{"*"}},
			url: srv.at("::1", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "::1",
		},
		{
			name: "ipv4-mapped loopback", p: Policy{AllowedHosts: []string{"*"}},
			url: srv.at("::ffff:127.0.0.1", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "::ffff:127.0.0.1",
		},
		{
			name: "ipv4-mapped loopback in hex", p: Policy{AllowedHosts: []string{"*"}},
			url: srv.at("::ffff:7f00:1", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "::ffff:7f00:1",
		},
		{
			name: "unspecified address", p: Policy{AllowedHosts: []string{"*"}},
			url: srv.at("0.0.0.0", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "0.0.0.0",
		},
		{
			name: "name resolving to loopback is refused at dial", p: Policy{AllowedHosts: []string{"*.test"}},
			hosts: map[string][]netip.Addr{"rebind.test": addrs("127.0.0.1")},
			url:   srv.at("rebind.test", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "rebind.test",
		},
		{
			name: "name resolving to mapped loopback is refused at dial", p: Policy{AllowedHosts: []string{"*.test"}},
			hosts: map[string][]netip.Addr{"rebind.test": addrs("::ffff:127.0.0.1")},
			url:   srv.at("rebind.test", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "rebind.test",
		},
		{
			name: "name with one private address among public ones", p: Policy{AllowedHosts: []string{"*.test"}},
			hosts: map[string][]netip.Addr{"mixed.test": addrs("1.2.3.4", "10.0.0.1")},
			url:   srv.at("mixed.test", "/"), wantKind: "ErrAddressDenied", wantDeniedAt: "mixed.test",
		},
		{
			name: "userinfo does not count as the host", p: Policy{AllowedHosts: []string{"allowed.test"}, AllowPrivate: true},
			hosts: map[string][]netip.Addr{"allowed.test": addrs("127.0.0.1"), "evil.test": addrs("127.0.0.1")},
			url:   "http://allowed.test@" + "evil.test:" + srv.port() + "/", wantKind: "ErrHostNotAllowed", wantDeniedAt: "evil.test",
		},
		{
			name: "decimal ip", p: Policy{AllowedHosts: []string{"*"}},
			url: "http://2130706433:" + srv.port() + "/", wantKind: "ErrBadRequest",
		},
		{
			name: "short ip", p: Policy{AllowedHosts: []string{"*"}, AllowPrivate: true},
			url: "http://127.1:" + srv.port() + "/", wantKind: "ErrBadRequest",
		},
		{
			name: "hex ip", p: Policy{AllowedHosts: []string{"*"}},
			url: "http://0x7f.0x1:" + srv.port() + "/", wantKind: "ErrBadRequest",
		},
		{
			name: "octal ip", p: Policy{AllowedHosts: []string{"*"}},
			url: "http://0177.0.0.1:" + srv.port() + "/", wantKind: "ErrBadRequest",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := srv.hits.Load()
			fn := &fakeNet{hosts: tt.hosts, passthrough: true}
			c := mustClient(t, tt.p, fn.options())
			resp, err := c.Do(context.Background(), Request{URL: tt.url})
			if diff := cmp.Diff(tt.wantKind, kindOf(err)); diff != "" {
				t.Fatalf("Do(%q) error kind (-want +got):\n%s\nerror: %v", tt.url, diff, err)
			}
			if diff := cmp.Diff(tt.wantHits, srv.hits.Load()-before); diff != "" {
				t.Errorf("server hits (-want +got):\n%s", diff)
			}
			if err != nil {
				t.Log(err)
				var de *DeniedError
				if tt.wantDeniedAt != "" && (!errors.As(err, &de) || de.Host != tt.wantDeniedAt) {
					t.Errorf("DeniedError.Host: got %+v, want %q", de, tt.wantDeniedAt)
				}
				_, dials := fn.counts()
				if len(dials) != 0 {
					t.Errorf("refused request dialed %q", dials)
				}
				return
			}
			if diff := cmp.Diff(&Response{Status: 200, Body: []byte("ok")}, resp,
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Headers" }, cmp.Ignore())); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetadataRefusedWithoutDialing checks that cloud metadata endpoints are
// refused before any DNS query or connection, in all their spellings.
func TestMetadataRefusedWithoutDialing(t *testing.T) {
	urls := []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://169.254.169.254:80/latest/meta-data/iam/security-credentials/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[2002:a9fe:a9fe::1]/",
		"http://[fe80::a9fe:a9fe%25eth0]/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/",
		"http://metadata/computeMetadata/v1/",
		"http://100.100.100.200/latest/meta-data/",
		"http://169.254.170.2/v2/credentials",
		"https://169.254.169.254/",
	}
	fn := &fakeNet{}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, fn.options())
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			_, err := c.Do(context.Background(), Request{URL: u})
			var de *DeniedError
			if !errors.Is(err, ErrAddressDenied) || !errors.As(err, &de) {
				t.Fatalf("Do(%q) = %v; want a *DeniedError matching ErrAddressDenied", u, err)
			}
			t.Log(err)
		})
	}
	lookups, dials := fn.counts()
	if len(lookups)+len(dials) != 0 {
		t.Errorf("metadata requests caused lookups %q and dials %q; want none", lookups, dials)
	}
}

// TestDialsCheckedAddress checks that the client connects to the addresses it
// resolved and checked, in order, and nowhere else.
func TestDialsCheckedAddress(t *testing.T) {
	fn := &fakeNet{hosts: map[string][]netip.Addr{"pub.test": addrs("1.2.3.4", "2606:4700::1111")}}
	c := mustClient(t, Policy{AllowedHosts: []string{"pub.test"}}, fn.options())
	_, err := c.Do(context.Background(), Request{URL: "http://PUB.test:8080/x"})
	if !errors.Is(err, errNoRoute) {
		t.Fatalf("Do = %v; want the fake dial error", err)
	}
	lookups, dials := fn.counts()
	if diff := cmp.Diff([]string{"pub.test"}, lookups); diff != "" {
		t.Errorf("lookups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1.2.3.4:8080", "[2606:4700::1111]:8080"}, dials); diff != "" {
		t.Errorf("dials (-want +got):\n%s", diff)
	}
}

func TestControl(t *testing.T) {
	deny := mustClient(t, Policy{}, options{})
	allow := mustClient(t, Policy{AllowPrivate: true}, options{})
	tests := []struct {
		addr      string
		wantDeny  string
		wantAllow string
	}{
		{"127.0.0.1:80", "ErrAddressDenied", ""},
		{"[::1]:80", "ErrAddressDenied", ""},
		{"[::ffff:127.0.0.1]:80", "ErrAddressDenied", ""},
		{"169.254.169.254:80", "ErrAddressDenied", ""},
		{"10.0.0.1:443", "ErrAddressDenied", ""},
		{"1.2.3.4:443", "", ""},
		{"[2606:4700::1111]:443", "", ""},
		{"not-an-address", "ErrAddressDenied", ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantDeny, kindOf(deny.control("tcp", tt.addr, nil))); diff != "" {
				t.Errorf("control without AllowPrivate (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAllow, kindOf(allow.control("tcp", tt.addr, nil))); diff != "" {
				t.Errorf("control with AllowPrivate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRealDialerRefusesLoopback runs the default dialer (system resolver and
// net.Dialer with its Control hook) on names that resolve without a network.
func TestRealDialerRefusesLoopback(t *testing.T) {
	srv := newServer(t, ok)
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, options{})
	for _, addr := range []string{"127.0.0.1:" + srv.port(), "localhost:" + srv.port()} {
		if _, err := c.dialContext(context.Background(), "tcp", addr); !errors.Is(err, ErrAddressDenied) {
			t.Errorf("dialContext(%q) = %v; want ErrAddressDenied", addr, err)
		}
	}
	// The Control hook alone, past the resolver check.
	if _, err := c.dialAddr(context.Background(), "tcp", "127.0.0.1:"+srv.port()); !errors.Is(err, ErrAddressDenied) {
		t.Errorf("dialAddr(loopback) = %v; want ErrAddressDenied", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("server saw %d requests; want 0", n)
	}
	open := mustClient(t, Policy{AllowedHosts: []string{"*"}, AllowPrivate: true}, options{})
	if _, err := open.Do(context.Background(), Request{URL: srv.at("localhost", "/")}); err != nil {
		t.Errorf("Do(localhost) with AllowPrivate = %v", err)
	}
}

func TestRedirectToHostNotAllowed(t *testing.T) {
	b := newServer(t, ok)
	a := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.at("b.test", "/secret"), http.StatusFound)
	})
	fn := &fakeNet{hosts: map[string][]netip.Addr{"a.test": addrs("127.0.0.1"), "b.test": addrs("127.0.0.1")}, passthrough: true}
	c := mustClient(t, Policy{AllowedHosts: []string{"a.test"}, AllowPrivate: true}, fn.options())

	_, err := c.Do(context.Background(), Request{URL: a.at("a.test", "/")})
	var de *DeniedError
	if !errors.Is(err, ErrHostNotAllowed) || !errors.As(err, &de) {
		t.Fatalf("Do = %v; want a *DeniedError matching ErrHostNotAllowed", err)
	}
	t.Log(err)
	want := DeniedError{URL: b.at("b.test", "/secret"), Host: "b.test", Kind: ErrHostNotAllowed}
	if diff := cmp.Diff(want, *de, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Reason" }, cmp.Ignore()),
		cmp.Comparer(func(x, y error) bool { return x == y })); diff != "" {
		t.Errorf("DeniedError (-want +got):\n%s", diff)
	}
	if a.hits.Load() != 1 || b.hits.Load() != 0 {
		t.Errorf("hits a=%d b=%d; want a=1 b=0", a.hits.Load(), b.hits.Load())
	}
	lookups, _ := fn.counts()
	if diff := cmp.Diff([]string{"a.test"}, lookups); diff != "" {
		t.Errorf("lookups (-want +got):\n%s", diff)
	}
}

// TestRedirectToPrivate runs a public-looking host whose redirect points
// inside; every form must be refused and the inside server never reached.
func TestRedirectToPrivate(t *testing.T) {
	inside := newServer(t, ok)
	var target string
	a := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	})
	fn := &fakeNet{
		hosts: map[string][]netip.Addr{
			"a.test":      addrs("1.2.3.4"),
			"rebind.test": addrs("127.0.0.1"),
		},
		routes: map[string]string{"1.2.3.4:" + a.port(): a.Listener.Addr().String()},
	}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}}, fn.options())
	for _, tgt := range []string{
		inside.at("127.0.0.1", "/"),
		inside.at("::ffff:127.0.0.1", "/"),
		inside.at("localhost", "/"),
		inside.at("rebind.test", "/"),
		"http://169.254.169.254/latest/meta-data/",
	} {
		t.Run(tgt, func(t *testing.T) {
			target = tgt
			_, err := c.Do(context.Background(), Request{URL: a.at("a.test", "/")})
			if !errors.Is(err, ErrAddressDenied) {
				t.Fatalf("Do = %v; want ErrAddressDenied", err)
			}
			t.Log(err)
		})
	}
	if n := inside.hits.Load(); n != 0 {
		t.Errorf("inside server saw %d requests; want 0", n)
	}
	_, dials := fn.counts()
	for _, d := range dials {
		if d != "1.2.3.4:"+a.port() {
			t.Errorf("dialed %q", d)
		}
	}
}

func TestRedirectHeaders(t *testing.T) {
	type seen struct {
		Host          string
		Authorization string
		Cookie        string
		Keep          string
		Referer       string
	}
	var (
		mu   sync.Mutex
		last seen
	)
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = seen{r.Host, r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("X-Keep"), r.Header.Get("Referer")}
		mu.Unlock()
	})
	// final redirects requests with a "to" parameter and records the others;
	// other only redirects, from another port.
	final := newServer(t, redirectOr(record))
	other := newServer(t, redirectOr(http.NotFoundHandler()))
	fn := &fakeNet{hosts: map[string][]netip.Addr{
		"a.test": addrs("127.0.0.1"), "sub.a.test": addrs("127.0.0.1"), "b.test": addrs("127.0.0.1"),
	}, passthrough: true}
	c := mustClient(t, Policy{AllowedHosts: []string{"*.test"}, AllowPrivate: true}, fn.options())
	headers := map[string]string{"Authorization": "Bearer s3cret", "Cookie": "session=s3cret", "X-Keep": "yes"}

	tests := []struct {
		name string
		from string
		to   string
		want seen
	}{
		{
			name: "same host keeps credentials", from: final.at("a.test", "/"), to: final.at("a.test", "/"),
			want: seen{Host: "a.test:" + final.port(), Authorization: "Bearer s3cret", Cookie: "session=s3cret", Keep: "yes"},
		},
		{
			name: "other host drops credentials", from: final.at("a.test", "/"), to: final.at("b.test", "/"),
			want: seen{Host: "b.test:" + final.port(), Keep: "yes"},
		},
		{
			name: "subdomain drops credentials", from: final.at("a.test", "/"), to: final.at("sub.a.test", "/"),
			want: seen{Host: "sub.a.test:" + final.port(), Keep: "yes"},
		},
		{
			name: "same name on another port drops credentials", from: other.at("a.test", "/"), to: final.at("a.test", "/"),
			want: seen{Host: "a.test:" + final.port(), Keep: "yes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.from + "?to=" + url.QueryEscape(tt.to)
			if _, err := c.Do(context.Background(), Request{URL: u, Headers: headers}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got := last
			mu.Unlock()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers at the redirect target (-want +got):\n%s", diff)
			}
		})
	}
}

// redirectOr redirects a request with a "to" query parameter there and passes
// every other request to h.
func redirectOr(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		h.ServeHTTP(w, r)
	}
}

func TestRedirectLimit(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		total, _ := strconv.Atoi(r.URL.Query().Get("total"))
		if n < total {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n+1)+"?total="+strconv.Itoa(total), http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("done"))
	})
	tests := []struct {
		name         string
		maxRedirects int
		total        int
		wantKind     string
		wantHits     int32
	}{
		{"at the limit", 3, 3, "", 4},
		{"one past the limit", 3, 4, "ErrTooManyRedirects", 4},
		{"far past the limit", 1, 50, "ErrTooManyRedirects", 2},
		{"default limit reached", 0, DefaultMaxRedirects, "", DefaultMaxRedirects + 1},
		{"default limit passed", 0, DefaultMaxRedirects + 1, "ErrTooManyRedirects", DefaultMaxRedirects + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true, MaxRedirects: tt.maxRedirects}, options{})
			before := srv.hits.Load()
			_, err := c.Do(context.Background(), Request{URL: srv.at("127.0.0.1", "/hop/0?total="+strconv.Itoa(tt.total))})
			if diff := cmp.Diff(tt.wantKind, kindOf(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(tt.wantHits, srv.hits.Load()-before); diff != "" {
				t.Errorf("server hits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedirectHTTPSToHTTP(t *testing.T) {
	plain := newServer(t, ok)
	var tlsHits int
	var mu sync.Mutex
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tlsHits++
		mu.Unlock()
		switch r.URL.Path {
		case "/down":
			http.Redirect(w, r, plain.at("127.0.0.1", "/"), http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/end", http.StatusFound)
		default:
			_, _ = w.Write([]byte("secure"))
		}
	}))
	t.Cleanup(secure.Close)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true},
		options{tlsConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}})

	_, err := c.Do(context.Background(), Request{URL: secure.URL + "/down"})
	if !errors.Is(err, ErrBadRequest) {
		t.Errorf("https to http redirect: Do = %v; want ErrBadRequest", err)
	}
	t.Log(err)
	if n := plain.hits.Load(); n != 0 {
		t.Errorf("plain server saw %d requests; want 0", n)
	}
	resp, err := c.Do(context.Background(), Request{URL: secure.URL + "/same"})
	if err != nil || string(resp.Body) != "secure" {
		t.Errorf("https to https redirect: Do = %+v, %v; want body \"secure\"", resp, err)
	}
}

func TestResponseCap(t *testing.T) {
	const limit = 16
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	})
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true, MaxResponseBytes: limit}, options{})
	tests := []struct {
		name     string
		query    string
		wantKind string
		wantLen  int
	}{
		{"empty", "n=0", "", 0},
		{"exactly the cap", "n=16", "", limit},
		{"one over the cap", "n=17", "ErrResponseTooLarge", 0},
		{"far over the cap", "n=100000", "ErrResponseTooLarge", 0},
		{"exactly the cap, chunked", "n=16&chunked=1", "", limit},
		{"one over the cap, chunked", "n=17&chunked=1", "ErrResponseTooLarge", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(context.Background(), Request{URL: srv.at("127.0.0.1", "/?"+tt.query)})
			if diff := cmp.Diff(tt.wantKind, kindOf(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err == nil && len(resp.Body) != tt.wantLen {
				t.Errorf("body length %d; want %d", len(resp.Body), tt.wantLen)
			}
		})
	}
}

// blockingServer returns a server whose handler signals started, optionally
// sends headers and part of a body, and then blocks until the test ends.
func blockingServer(t *testing.T, sendHeaders bool) (srv *server, started <-chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	st := make(chan struct{}, 16)
	srv = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if sendHeaders {
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		st <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv, st
}

func TestCancel(t *testing.T) {
	for _, tt := range []struct {
		name        string
		sendHeaders bool
	}{
		{"while waiting for headers", false},
		{"while reading the body", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, started := blockingServer(t, tt.sendHeaders)
			c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true}, options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, Request{URL: srv.at("127.0.0.1", "/")})
				done <- err
			}()
			<-started
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Do after cancel = %v; want context.Canceled", err)
			}
		})
	}
}

func TestPolicyTimeout(t *testing.T) {
	srv, _ := blockingServer(t, false)
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true, Timeout: 20 * time.Millisecond}, options{})
	_, err := c.Do(context.Background(), Request{URL: srv.at("127.0.0.1", "/")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do = %v; want context.DeadlineExceeded", err)
	}
}

func TestForwarding(t *testing.T) {
	type echo struct {
		Method string
		Path   string
		Header map[string]string
		Body   string
	}
	var (
		mu  sync.Mutex
		got echo
	)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = echo{r.Method, r.URL.RequestURI(), map[string]string{
			"X-Test": r.Header.Get("X-Test"), "Content-Type": r.Header.Get("Content-Type"), "Host": r.Host,
		}, string(b)}
		mu.Unlock()
		w.Header()["X-Multi"] = []string{"a", "b"}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-CamelCase", "v")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("created"))
	})
	c := mustClient(t, Policy{AllowedHosts: []string{"127.0.0.1"}, AllowPrivate: true}, options{})
	resp, err := c.Do(context.Background(), Request{
		URL:     srv.at("127.0.0.1", "/items?x=1"),
		Method:  "post",
		Headers: map[string]string{"x-test": "hello", "Content-Type": "application/json", "Host": "127.0.0.1:" + srv.port()},
		Body:    []byte(`{"a":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	wantEcho := echo{"POST", "/items?x=1", map[string]string{
		"X-Test": "hello", "Content-Type": "application/json", "Host": "127.0.0.1:" + srv.port(),
	}, `{"a":1}`}
	mu.Lock()
	if diff := cmp.Diff(wantEcho, got); diff != "" {
		t.Errorf("request seen by the server (-want +got):\n%s", diff)
	}
	mu.Unlock()
	delete(resp.Headers, "date")
	want := &Response{
		Status: http.StatusCreated,
		Headers: map[string]string{
			"x-multi": "a,b", "content-type": "text/plain", "x-camelcase": "v", "content-length": "7",
		},
		Body: []byte("created"),
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestBadRequest(t *testing.T) {
	srv := newServer(t, ok)
	good := srv.at("127.0.0.1", "/")
	tests := []struct {
		name string
		r    Request
	}{
		{"ftp scheme", Request{URL: "ftp://127.0.0.1/"}},
		{"file scheme", Request{URL: "file:///etc/passwd"}},
		{"gopher scheme", Request{URL: "gopher://127.0.0.1:" + srv.port() + "/"}},
		{"no scheme", Request{URL: "127.0.0.1:" + srv.port()}},
		{"relative", Request{URL: "/path"}},
		{"no host", Request{URL: "http:///path"}},
		{"opaque", Request{URL: "http:127.0.0.1"}},
		{"empty", Request{}},
		{"space in host", Request{URL: "http://a b/"}},
		{"backslash userinfo", Request{URL: `http://127.0.0.1\@evil.test/`}},
		{"port out of range", Request{URL: "http://127.0.0.1:99999/"}},
		{"non-ascii host", Request{URL: "http://ｌocalhost/"}},
		{"bad method", Request{URL: good, Method: "GET /x"}},
		{"connect", Request{URL: good, Method: "connect"}},
		{"bad header name", Request{URL: good, Headers: map[string]string{"X Bad": "v"}}},
		{"header injection", Request{URL: good, Headers: map[string]string{"X-A": "v\r\nX-Injected: 1"}}},
		{"nul in header", Request{URL: good, Headers: map[string]string{"X-A": "v\x00"}}},
		{"host header differs", Request{URL: good, Headers: map[string]string{"Host": "evil.test"}}},
	}
	c := mustClient(t, Policy{AllowedHosts: []string{"*"}, AllowPrivate: true}, options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Do(context.Background(), tt.r)
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("Do(%+v) = %v; want ErrBadRequest", tt.r, err)
			}
			t.Log(err)
		})
	}
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("server saw %d requests; want 0", n)
	}
}

// TestHammer runs many requests at once under -race.
func TestHammer(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(r.URL.Path)) })
	fn := &fakeNet{hosts: map[string][]netip.Addr{"a.test": addrs("127.0.0.1")}, passthrough: true}
	c := mustClient(t, Policy{AllowedHosts: []string{"a.test", "127.0.0.1"}, AllowPrivate: true}, fn.options())
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				host := "a.test"
				if i%2 == 1 {
					host = "127.0.0.1"
				}
				path := "/" + strconv.Itoa(w) + "/" + strconv.Itoa(i)
				resp, err := c.Do(context.Background(), Request{URL: srv.at(host, path)})
				if err == nil && string(resp.Body) != path {
					err = errors.New("got body " + string(resp.Body) + " for " + path)
				}
				if err != nil {
					errs <- err
				}
				_ = c.HostAllowed("b.test")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
