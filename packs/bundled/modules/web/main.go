// Command web is the bundled "web" tool module: http_fetch, which reaches
// URLs through the host's http_request function. It needs the network
// capability (allowed_hosts); the host enforces which hosts, redirects and
// addresses are allowed. The config key user_agent sets the User-Agent.
//
// The tools are ordinary Go and are tested natively; exports.go (wasip1
// only) holds the Wasm exports. Build with ./build.sh.
package main

func main() {}
