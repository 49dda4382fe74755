package host_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

const rustHostile = "rust/rusthostile/rusthostile.wasm"

// rustHostileCases are the attacks of the Go hostile guest, compiled by
// another toolchain. They run in their own test rather than in the shared
// hostile set: under the race detector on a loaded machine, seven more
// concurrent attackers pushed the set's slowest case past its minute.
var rustHostileCases = []hostileCase{
	{file: rustHostile, export: "spin", kind: host.ErrTimeout},
	{file: rustHostile, export: "alloc_bomb", kind: host.ErrLimit},
	{file: rustHostile, export: "panic", kind: host.ErrTrap},
	{file: rustHostile, export: "fs_escape", input: "/etc/passwd", check: func(t *testing.T, res *host.Result) {
		if !strings.HasPrefix(string(res.Output), "error: ") {
			t.Errorf("fs_escape read /etc/passwd: %.40q", res.Output)
		}
	}},
	{file: rustHostile, export: "sleep", input: "60000", kind: host.ErrTimeout},
	{file: rustHostile, export: "http_get", input: "http://169.254.169.254/latest/meta-data/", kind: host.ErrDenied},
	{file: rustHostile, export: "http_get", input: "http://localhost:1/", kind: host.ErrDenied},
}

// The Rust hostile guest is contained as the Go one is, metered and not:
// each attack ends with its expected error, and the host keeps serving.
func TestRustHostileContained(t *testing.T) {
	for _, metered := range []bool{true, false} {
		t.Run(fmt.Sprintf("metered=%v", metered), func(t *testing.T) {
			h := newHost(t, testConfig().WithMetering(metered))
			m := load(t, h, rustHostile)
			g := host.Grant{AllowedHosts: []string{"*"}, Limits: host.Limits{Timeout: time.Second, MaxMemoryBytes: 64 << 20, MaxLogBytes: hostileLogCap}}
			for _, c := range rustHostileCases {
				cg := g
				if c.kind != host.ErrTimeout {
					cg.Limits.Timeout = time.Minute
				}
				res, err := m.Call(t.Context(), c.export, []byte(c.input), &host.CallOptions{Grant: cg})
				switch {
				case c.kind == nil && err != nil:
					t.Errorf("%s: %v", c.export, err)
				case c.kind != nil && !errors.Is(err, c.kind):
					t.Errorf("%s: err = %v, want %v", c.export, err, c.kind)
				}
				if c.check != nil {
					c.check(t, res)
				}
			}
			if out := mustCall(t, load(t, h, "wat/echo.wasm"), "echo", "still serving", host.Grant{}); out != "still serving" {
				t.Errorf("echo after the attacks: %q", out)
			}
		})
	}
}

// A Rust guest writing 1 MiB lines to stdout forever is stopped at its
// deadline, and what it wrote is kept only up to the log cap.
func TestRustStdoutFloodContained(t *testing.T) {
	for _, metered := range []bool{true, false} {
		t.Run(fmt.Sprintf("metered=%v", metered), func(t *testing.T) {
			h := newHost(t, testConfig().WithMetering(metered))
			m := load(t, h, rustHostile)
			res, err := call(m, "stdout_flood", "", host.Grant{Limits: host.Limits{Timeout: 500 * time.Millisecond, MaxLogBytes: hostileLogCap}})
			wantKind(t, err, host.ErrTimeout)
			total := 0
			for _, e := range res.Logs {
				total += len(e.Message)
			}
			if total > hostileLogCap || !res.LogsTruncated {
				t.Errorf("stdout flood kept %d bytes of logs (truncated %v), cap %d", total, res.LogsTruncated, hostileLogCap)
			}
		})
	}
}
