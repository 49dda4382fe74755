package host_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// Module.Call gives every call fresh state — also when it serves calls
// from restored instances — while a Pool keeps state between calls.
func TestFreshStateBetweenCalls(t *testing.T) {
	for _, metered := range []bool{true, false} {
		t.Run(fmt.Sprintf("metered=%v", metered), func(t *testing.T) {
			h := newHost(t, testConfig().WithMetering(metered))
			wat := load(t, h, "wat/state.wasm")
			gocaps := load(t, h, "go/gocaps/gocaps.wasm")
			for i := 0; i < 5; i++ {
				// Globals and linear memory.
				if got := mustCall(t, wat, "bump", "", host.Grant{}); got != "1001" {
					t.Fatalf("call %d: bump = %s, want 1001 (state leaked)", i, got)
				}
				// A Go guest's package variables and heap.
				if got := mustCall(t, gocaps, "counter", fmt.Sprint(i), host.Grant{}); got != "1 1" {
					t.Fatalf("call %d: counter = %q, want \"1 1\" (state leaked)", i, got)
				}
				// Host-side vars.
				if got := mustCall(t, load(t, h, "wat/echo.wasm"), "vars", "", host.Grant{}); got != "1" {
					t.Fatalf("call %d: vars = %s, want 1", i, got)
				}
			}
			// A call that grows memory leaves nothing behind either.
			for i := 0; i < 3; i++ {
				if got := mustCall(t, wat, "grow", "", host.Grant{}); got != "2" {
					t.Fatalf("grow call %d: %s pages, want 2", i, got)
				}
				if got := mustCall(t, gocaps, "hoard", "8", host.Grant{}); got != "8" {
					t.Fatalf("hoard call %d: %s MiB, want 8", i, got)
				}
			}
			// After a trap, too.
			if _, err := call(gocaps, "read_file", "/nonexistent", host.Grant{}); err != nil {
				t.Fatal(err)
			}
			if got := mustCall(t, gocaps, "counter", "x", host.Grant{}); got != "1 1" {
				t.Errorf("after other calls: counter = %q", got)
			}

			p, err := wat.NewPool(host.CallOptions{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for i := 1; i <= 3; i++ {
				res, err := p.Call(t.Context(), "bump", nil)
				if err != nil || string(res.Output) != fmt.Sprint(i*1001) {
					t.Fatalf("warm pool call %d: %q, %v", i, res.Output, err)
				}
			}
		})
	}
}

// Calls under different mounts or env never share an instance: what the
// guest sees of its files and environment is the call's own.
func TestFreshStateFollowsTheGrant(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "go/gocaps/gocaps.wasm")
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "f"), []byte("from a"), 0o644)
	os.WriteFile(filepath.Join(b, "f"), []byte("from b"), 0o644)
	ga := host.Grant{Mounts: []host.Mount{{HostPath: a, GuestPath: "/d"}}, Env: map[string]string{"WHO": "a"}}
	gb := host.Grant{Mounts: []host.Mount{{HostPath: b, GuestPath: "/d"}}, Env: map[string]string{"WHO": "b"}}
	for i := 0; i < 3; i++ {
		for _, c := range []struct {
			g          host.Grant
			file, name string
		}{{ga, "from a", "a"}, {gb, "from b", "b"}, {host.Grant{}, "error: *", "<unset>"}} {
			got := mustCall(t, m, "read_file", "/d/f", c.g)
			if c.file == "error: *" {
				if len(got) < 7 || got[:7] != "error: " {
					t.Errorf("no mount: read %q", got)
				}
			} else if got != c.file {
				t.Errorf("read %q, want %q", got, c.file)
			}
			if got := mustCall(t, m, "getenv", "WHO", c.g); got != c.name {
				t.Errorf("WHO = %q, want %q", got, c.name)
			}
		}
	}
}
