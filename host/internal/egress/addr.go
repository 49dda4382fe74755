package egress

import (
	"net/netip"
	"strings"
)

// metadataAddrs are cloud instance-metadata endpoints. Most also fall in a
// denied range; naming them gives a clearer reason.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, ...
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud
}

type specialPrefix struct {
	prefix netip.Prefix
	reason string
}

// specialPrefixes are ranges that are not loopback, private, link-local or
// multicast by netip's reckoning but are still no place for a guest to go.
var specialPrefixes = []specialPrefix{
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade nat address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an ietf special-purpose address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay anycast address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
	{netip.MustParsePrefix("::/96"), "an ipv4-compatible address"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an ipv4-translated address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use nat64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001::/23"), "an ietf special-purpose address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

var (
	nat64Prefix    = netip.MustParsePrefix("64:ff9b::/96")
	sixToFourPref  = netip.MustParsePrefix("2002::/16")
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
)

// deniedReason returns why a guest may not connect to ip without
// AllowPrivate, such as "a loopback address", or "" when ip is an ordinary
// public unicast address. IPv4-mapped addresses are unmapped first and zones
// are ignored; NAT64 and 6to4 addresses are judged by the IPv4 address they
// embed. Outside the ranges it knows, IPv6 must be global unicast (2000::/3).
func deniedReason(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	switch {
	case !ip.IsValid():
		return "an invalid address"
	case metadataAddrs[ip]:
		return "a cloud metadata endpoint"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsMulticast():
		return "a multicast address"
	}
	for _, s := range specialPrefixes {
		if s.prefix.Contains(ip) {
			return s.reason
		}
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			v4 := netip.AddrFrom4([4]byte(b[12:16]))
			if r := deniedReason(v4); r != "" {
				return "a nat64 address of " + v4.String() + " (" + r + ")"
			}
		case sixToFourPref.Contains(ip):
			v4 := netip.AddrFrom4([4]byte(b[2:6]))
			if r := deniedReason(v4); r != "" {
				return "a 6to4 address of " + v4.String() + " (" + r + ")"
			}
		case !globalUnicast6.Contains(ip):
			return "a reserved ipv6 address"
		}
	}
	return ""
}

// localNames are names that only ever point inside: loopback, the link, the
// site, or a cloud metadata service. Their addresses are checked at dial time
// anyway; refusing the name first gives a clearer error and sends nothing,
// not even a DNS query.
var localNames = map[string]string{
	"localhost":                "a loopback name",
	"metadata":                 "a cloud metadata name",
	"metadata.google.internal": "a cloud metadata name",
	"metadata.goog":            "a cloud metadata name",
	"instance-data":            "a cloud metadata name",
}

var localSuffixes = []struct{ suffix, reason string }{
	{".localhost", "a loopback name"},
	{".local", "a link-local (mdns) name"},
	{".internal", "a private-use name"},
	{".home.arpa", "a private-use name"},
}

// deniedName returns why a guest may not reach the normalized hostname host
// without AllowPrivate, or "" when the name may be resolved and its addresses
// checked. Trailing dots are ignored.
func deniedName(host string) string {
	host = strings.TrimRight(host, ".")
	if r, ok := localNames[host]; ok {
		return r
	}
	for _, s := range localSuffixes {
		if strings.HasSuffix(host, s.suffix) {
			return s.reason
		}
	}
	return ""
}

// loopbackAddrs are what a loopback name (see isLoopbackName) resolves to
// under AllowPrivate, without a lookup.
var loopbackAddrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}

// isLoopbackName reports whether the normalized hostname host is
// "localhost" or a name under it, which RFC 6761 reserves for the loopback
// interface. Trailing dots are ignored.
func isLoopbackName(host string) bool {
	host = strings.TrimRight(host, ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// hasEmptyLabel reports whether the normalized hostname host, which is not
// an IP address, has an empty label: it starts with a dot, has two in a
// row, or still ends with one after normalizeHost dropped the first
// ("localhost.."). No DNS name does, and such a name would dodge the name
// checks above and go to the resolver as it is.
func hasEmptyLabel(host string) bool {
	return strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") || strings.Contains(host, "..")
}

// endsInNumber reports whether the normalized hostname host has a last label
// that is a decimal or 0x-hexadecimal number. Such a host is an IPv4 address
// to a browser or to inet_aton ("2130706433", "0x7f.1", "127.1",
// "0177.0.0.1") and never a DNS name, since no top-level domain is numeric.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		for _, r := range rest {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
