package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// defaultLookup resolves host with the system resolver.
func defaultLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// dialContext is the Transport's DialContext. It judges the host again,
// resolves it, refuses the connection if any address is denied, and dials
// the checked addresses only, so that DNS cannot answer differently between
// the check and the connect.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	rawHost, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial address %q: %v", ErrBadRequest, addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: port %q is not a number from 0 to 65535", ErrBadRequest, portStr)
	}
	host := normalizeHost(rawHost)
	// The URL was checked before the request was sent; this repeats the
	// check on exactly what the Transport asked to dial.
	if !c.HostAllowed(host) {
		return nil, hostNotAllowed("", host, "")
	}

	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		if hasEmptyLabel(host) {
			return nil, fmt.Errorf("%w: dial address %q: host %q has an empty label", ErrBadRequest, addr, rawHost)
		}
		if !c.allowPrivate {
			if r := deniedName(host); r != "" {
				return nil, addressDenied("", host, fmt.Sprintf("host %q is %s", host, r))
			}
		}
		if isLoopbackName(host) {
			// Only reached with AllowPrivate. RFC 6761: the loopback
			// interface, with no query to anyone.
			addrs = loopbackAddrs
		} else if addrs, err = c.lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("resolving host %q: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolving host %q: no addresses", host)
		}
	}
	if !c.allowPrivate {
		// One bad address spoils the lot: a name that mixes public and
		// private records is an attack or a mistake either way.
		for _, ip := range addrs {
			if r := deniedReason(ip); r != "" {
				if ip.String() == host {
					return nil, addressDenied("", host, fmt.Sprintf("host %q is %s", host, r))
				}
				return nil, addressDenied("", host, fmt.Sprintf("host %q resolves to %s, %s,", host, ip.WithZone(""), r))
			}
		}
	}

	var firstErr error
	for _, ip := range addrs {
		conn, err := c.dialAddr(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// control is the net.Dialer Control hook: a last check, on the address the
// socket is about to connect to.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	if c.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return addressDenied("", address, fmt.Sprintf("dial address %q is not an ip address", address))
	}
	if r := deniedReason(ap.Addr()); r != "" {
		return addressDenied("", ap.Addr().String(), fmt.Sprintf("address %s is %s", ap.Addr(), r))
	}
	return nil
}
