package egress

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDeniedReason(t *testing.T) {
	// true means refused without AllowPrivate.
	want := map[string]bool{
		// Public.
		"1.1.1.1":              false,
		"8.8.8.8":              false,
		"93.184.215.14":        false,
		"100.63.255.255":       false,
		"100.128.0.0":          false,
		"169.253.255.255":      false,
		"172.32.0.1":           false,
		"223.255.255.255":      false,
		"2606:4700::1111":      false,
		"2a00:1450::1":         false,
		"::ffff:8.8.8.8":       false,
		"64:ff9b::808:808":     false, // NAT64 of 8.8.8.8
		"2002:808:808::1":      false, // 6to4 of 8.8.8.8
		"2001:4860:4860::8888": false,
		// Loopback, unspecified, this network.
		"127.0.0.1":        true,
		"127.255.255.254":  true,
		"0.0.0.0":          true,
		"0.1.2.3":          true,
		"::":               true,
		"::1":              true,
		"::ffff:127.0.0.1": true,
		"::ffff:0.0.0.0":   true,
		"::127.0.0.1":      true, // IPv4-compatible
		// Private.
		"10.0.0.1":        true,
		"172.16.0.1":      true,
		"172.31.255.255":  true,
		"192.168.1.1":     true,
		"::ffff:10.0.0.1": true,
		"fc00::1":         true,
		"fd12:3456::1":    true,
		// Link-local and metadata.
		"169.254.0.1":            true,
		"169.254.169.254":        true,
		"::ffff:169.254.169.254": true,
		"fd00:ec2::254":          true,
		"fe80::1":                true,
		"fe80::1%eth0":           true,
		"100.100.100.200":        true,
		"192.0.0.192":            true,
		// CGNAT, special, documentation, reserved, broadcast.
		"100.64.0.1":      true,
		"100.127.255.255": true,
		"192.0.0.1":       true,
		"192.0.2.1":       true,
		"198.18.0.1":      true,
		"198.51.100.1":    true,
		"203.0.113.1":     true,
		"240.0.0.1":       true,
		"255.255.255.255": true,
		"2001:db8::1":     true,
		"3fff::1":         true,
		"2001::1":         true, // Teredo
		"100::1":          true,
		"fec0::1":         true,
		"::ffff:0:7f00:1": true, // IPv4-translated
		// Multicast.
		"224.0.0.1": true,
		"239.1.1.1": true,
		"ff02::1":   true,
		"ff05::1":   true,
		// Embedded IPv4 that is private.
		"64:ff9b::7f00:1":    true,
		"64:ff9b::a00:1":     true,
		"64:ff9b:1::1":       true,
		"2002:7f00:1::1":     true,
		"2002:a9fe:a9fe::":   true,
		"2002:c0a8:101::1":   true,
		"4000::1":            true, // outside 2000::/3
		"1000::1":            true,
		"64:ff9b::ffff:ffff": true,
	}
	got := map[string]bool{}
	for s := range want {
		r := deniedReason(netip.MustParseAddr(s))
		got[s] = r != ""
		if r != "" {
			t.Logf("%s: %s", s, r)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	if r := deniedReason(netip.Addr{}); r == "" {
		t.Error("the zero Addr is not denied")
	}
}

func TestDeniedName(t *testing.T) {
	want := map[string]bool{
		"localhost":                true,
		"a.localhost":              true,
		"printer.local":            true,
		"metadata":                 true,
		"metadata.google.internal": true,
		"anything.internal":        true,
		"router.home.arpa":         true,
		"instance-data":            true,
		"example.com":              false,
		"localhost.example.com":    false,
		"internal.example.com":     false,
		"mylocal":                  false,
	}
	got := map[string]bool{}
	for h := range want {
		got[h] = deniedName(h) != ""
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deniedName (-want +got):\n%s", diff)
	}
}

func TestEndsInNumber(t *testing.T) {
	want := map[string]bool{
		"2130706433":    true,
		"127.1":         true,
		"0x7f.1":        true,
		"0x7f000001":    true,
		"0177.0.0.1":    true,
		"1.2.3.4.5":     true,
		"a.0x":          true,
		"example.com":   false,
		"1.example.com": false,
		"example.0xg":   false,
		"3com":          false,
		"a.b.":          false,
		"":              false,
	}
	got := map[string]bool{}
	for h := range want {
		got[h] = endsInNumber(h)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endsInNumber (-want +got):\n%s", diff)
	}
}
