package egress

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// allowedFuzzHost reports whether a normalized host is one the fuzz policy
// ("fuzz.test", "*.fuzz.test") allows.
func allowedFuzzHost(h string) bool {
	return h == "fuzz.test" || strings.HasSuffix(h, ".fuzz.test")
}

var fuzzSeeds = []string{
	"http://fuzz.test/",
	"https://api.fuzz.test:8443/x?y=1#z",
	"http://fuzz.test@evil.test/",
	"http://evil.test#@fuzz.test/",
	"http://evil.test?.fuzz.test/",
	"http://evil.test\\.fuzz.test/",
	"http://evil.test%2f.fuzz.test/",
	"http://fuzz.test.evil.test/",
	"http://FUZZ.TEST./",
	"http://[::1]/",
	"http://[::ffff:127.0.0.1]:80/",
	"http://127.0.0.1/",
	"http://2130706433/",
	"http://0x7f.1/",
	"http://169.254.169.254/latest/meta-data/",
	"http://metadata.google.internal/",
	"http://localhost.fuzz.test/",
	"http://ｆuzz.test/",
	"http://xn--fuzz-9ra.test/",
	"gopher://fuzz.test/",
	"http:fuzz.test",
	"//fuzz.test/",
	"http://fuzz.test:99999/",
	"http://[fe80::1%25eth0]/",
	"http://a.fuzz.test\x00.evil.test/",
	"",
}

// FuzzDo sends arbitrary URLs through the whole client with a fake resolver
// and dialer. It must never panic, and no host outside the allowlist may be
// resolved or dialed; every resolved name points inside, so nothing may be
// dialed at all.
func FuzzDo(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "GET")
	}
	f.Add("http://fuzz.test/", "post")
	f.Add("http://fuzz.test/", "GET /x HTTP/1.1\r\n")
	f.Fuzz(func(t *testing.T, rawURL, method string) {
		fn := &fakeNet{hosts: map[string][]netip.Addr{}}
		lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
			if !allowedFuzzHost(host) {
				t.Errorf("resolved %q, which is not allowed (url %q)", host, rawURL)
			}
			return addrs("127.0.0.1", "10.1.2.3"), nil
		}
		c, err := newClient(Policy{AllowedHosts: []string{"fuzz.test", "*.fuzz.test"}},
			options{lookup: lookup, dialAddr: fn.dial})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		resp, err := c.Do(context.Background(), Request{URL: rawURL, Method: method})
		if err == nil {
			t.Fatalf("Do(%q) = %+v with no network; want an error", rawURL, resp)
		}
		if _, dials := fn.counts(); len(dials) != 0 {
			t.Errorf("Do(%q) dialed %q", rawURL, dials)
		}
		var de *DeniedError
		if errors.As(err, &de) && errors.Is(err, ErrHostNotAllowed) && allowedFuzzHost(de.Host) {
			t.Errorf("Do(%q): allowed host %q refused as not allowed: %v", rawURL, de.Host, err)
		}
	})
}

// FuzzHostAllowed checks that only hosts the globs describe are allowed.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{
		"fuzz.test", "a.fuzz.test", "FUZZ.test.", "[a.fuzz.test]", "evil.test", "fuzz.test.evil",
		"afuzz.test", ".fuzz.test", "a.fuzz.test:80", "ａ.fuzz.test", "\xff.fuzz.test", "",
	} {
		f.Add(s)
	}
	c, err := NewClient(Policy{AllowedHosts: []string{"fuzz.test", "*.fuzz.test"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got := c.HostAllowed(host)
		n := normalizeHost(host)
		want := isASCII(n) && allowedFuzzHost(n)
		if got != want {
			t.Errorf("HostAllowed(%q) = %v; want %v", host, got, want)
		}
	})
}

// FuzzDeniedReasonMapped checks that an IPv4 address and its IPv4-mapped
// IPv6 form are always judged alike, and that NAT64 never launders a denied
// IPv4 address.
func FuzzDeniedReasonMapped(f *testing.F) {
	for _, b := range [][4]byte{{127, 0, 0, 1}, {10, 0, 0, 1}, {169, 254, 169, 254}, {8, 8, 8, 8}, {100, 64, 0, 1}} {
		f.Add(b[0], b[1], b[2], b[3])
	}
	f.Fuzz(func(t *testing.T, a, b, c, d byte) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		mapped := netip.AddrFrom16(v4.As16())
		nat64 := netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 10: 0, 11: 0, 12: a, 13: b, 14: c, 15: d})
		r4 := deniedReason(v4)
		if rm := deniedReason(mapped); rm != r4 {
			t.Errorf("%s: %q, but %s: %q", v4, r4, mapped, rm)
		}
		if r4 != "" && deniedReason(nat64) == "" {
			t.Errorf("%s is denied (%s) but its nat64 form %s is not", v4, r4, nat64)
		}
	})
}
