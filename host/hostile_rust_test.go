package host_test

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// The Rust twin of the Go hostile guest joins the hostile set: the same
// attacks, compiled by another toolchain, contained the same way.
func init() {
	const f = "rust/rusthostile/rusthostile.wasm"
	hostileCases = append(hostileCases,
		hostileCase{file: f, export: "spin", kind: host.ErrTimeout},
		hostileCase{file: f, export: "alloc_bomb", kind: host.ErrLimit},
		hostileCase{file: f, export: "stdout_flood", kind: host.ErrTimeout, check: func(t *testing.T, res *host.Result) {
			total := 0
			for _, e := range res.Logs {
				total += len(e.Message)
			}
			if total > hostileLogCap {
				t.Errorf("stdout flood kept %d bytes of logs, above the %d cap", total, hostileLogCap)
			}
		}},
		hostileCase{file: f, export: "panic", kind: host.ErrTrap},
		hostileCase{file: f, export: "fs_escape", input: "/etc/passwd", check: func(t *testing.T, res *host.Result) {
			if !strings.HasPrefix(string(res.Output), "error: ") {
				t.Errorf("fs_escape read /etc/passwd: %.40q", res.Output)
			}
		}},
		hostileCase{file: f, export: "sleep", input: "60000", kind: host.ErrTimeout},
		hostileCase{file: f, export: "http_get", input: "http://169.254.169.254/latest/meta-data/", kind: host.ErrDenied},
		hostileCase{file: f, export: "http_get", input: "http://localhost:1/", kind: host.ErrDenied},
	)
}
