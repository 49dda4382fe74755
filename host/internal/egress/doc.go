// Package egress is the HTTP egress guard behind the http_request host
// function: the only way a guest module reaches the network.
//
// # Threat model
//
// The guest is hostile. It chooses the URL, method, headers and body, and it
// may control the servers it talks to, their DNS records and their redirects.
// It wants to reach what the host can reach and it cannot: loopback services,
// the private network, cloud metadata endpoints (169.254.169.254,
// fd00:ec2::254, metadata.google.internal) and hosts the operator did not
// list. A Client defends in layers, and every layer fails closed:
//
//   - Before any connection, the URL must be absolute http or https with an
//     ASCII host (non-ASCII hosts are refused so that the name checked is the
//     name dialed, with no IDNA mapping in between), and a host that ends in a
//     number but is not a canonical IP address ("2130706433", "0x7f.1",
//     "127.1") is refused as ambiguous. The hostname, never the userinfo, is
//     matched against Policy.AllowedHosts.
//   - A hostname with an empty label (".a", "a..b", "localhost..": one
//     trailing dot is the only one allowed) is refused before anything else,
//     since it would slip past the name checks below.
//   - Unless Policy.AllowPrivate is set, IP literals and local-only or
//     metadata names ("localhost", "*.localhost", "*.internal", ...) in any
//     case and with or without the trailing dot are refused before any
//     connection and before any DNS query. With AllowPrivate, "localhost"
//     and "*.localhost" still never reach the resolver: they mean 127.0.0.1
//     and ::1.
//   - At dial time the Client resolves the name itself, refuses the whole
//     connection if any resolved address is loopback, private, link-local,
//     CGNAT, multicast, unspecified, reserved or otherwise special, and then
//     dials the very address it checked, so DNS rebinding between check and
//     connect is impossible. IPv4-mapped, NAT64 and 6to4 addresses are judged
//     by the IPv4 address they carry. A net.Dialer Control hook checks the
//     address of the socket once more.
//   - Every redirect hop is checked like the first request: scheme, allowed
//     host, address. A redirect from https to http is refused (it would
//     expose the request to the network path), and so is a chain longer than
//     Policy.MaxRedirects. Authorization, Cookie and similar headers are
//     dropped once the chain leaves the first request's host:port, which is
//     stricter than net/http (it keeps them for subdomains), and a Referer
//     the guest did not set is never added.
//   - The Client never uses a proxy (a proxy would connect on our behalf and
//     bypass the address check), never http.DefaultTransport, and refuses a
//     Host header that differs from the URL's host (domain fronting).
//   - Response bodies are capped; a body over the cap is an error, never a
//     silent truncation. Response headers are capped at 1 MiB.
//   - The caller's context, and Policy.Timeout, bound the whole exchange,
//     body included.
//
// Policy.AllowPrivate lifts the address checks entirely; only an operator
// sets it, for example to reach a service on the host's own network.
package egress
