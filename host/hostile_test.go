package host_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

const hostileLogCap = 256 << 10

type hostileCase struct {
	file, export, input string
	kind                error // nil: the call must end normally
	check               func(t *testing.T, res *host.Result)
}

var hostileCases = []hostileCase{
	{file: "wat/loop.wasm", export: "spin", kind: host.ErrTimeout},
	{file: "go/gohostile/gohostile.wasm", export: "spin", kind: host.ErrTimeout},
	{file: "wat/membomb.wasm", export: "grow_trap", kind: host.ErrLimit},
	{file: "go/gohostile/gohostile.wasm", export: "alloc_bomb", kind: host.ErrLimit},
	{file: "wat/flood.wasm", export: "output_flood", kind: host.ErrLimit},
	{file: "wat/flood.wasm", export: "kernel_bomb", kind: host.ErrLimit},
	{file: "wat/flood.wasm", export: "var_flood", kind: host.ErrLimit},
	{file: "wat/flood.wasm", export: "log_flood", input: "200", check: func(t *testing.T, res *host.Result) {
		if !res.LogsTruncated {
			t.Error("log flood: logs not truncated")
		}
	}},
	{file: "go/gohostile/gohostile.wasm", export: "stdout_flood", kind: host.ErrTimeout, check: func(t *testing.T, res *host.Result) {
		// How far the flood gets before its deadline depends on the load;
		// what it keeps never passes the cap.
		total := 0
		for _, e := range res.Logs {
			total += len(e.Message)
		}
		if total > hostileLogCap {
			t.Errorf("stdout flood kept %d bytes of logs, above the %d cap", total, hostileLogCap)
		}
	}},
	{file: "wat/recurse.wasm", export: "recurse", kind: host.ErrTrap},
	{file: "wat/trap.wasm", export: "trap", kind: host.ErrTrap},
	{file: "go/gohostile/gohostile.wasm", export: "panic", kind: host.ErrTrap},
	{file: "go/gohostile/gohostile.wasm", export: "fs_escape", input: "/etc/passwd", check: func(t *testing.T, res *host.Result) {
		if !strings.HasPrefix(string(res.Output), "error: ") {
			t.Errorf("fs_escape read /etc/passwd: %.40q", res.Output)
		}
	}},
	{file: "wat/blocking.wasm", export: "sleep", input: "60000", kind: host.ErrTimeout},
	{file: "go/gohostile/gohostile.wasm", export: "sleep", input: "60s", kind: host.ErrTimeout},
	{file: "go/gohostile/gohostile.wasm", export: "http_get", input: "http://169.254.169.254/latest/meta-data/", kind: host.ErrDenied},
	{file: "go/gohostile/gohostile.wasm", export: "http_get", input: "http://localhost:1/", kind: host.ErrDenied},
}

// The hostile set, all at once and twice over, with well-behaved calls
// running beside it: every hostile call is contained with the expected
// error, and every good call answers correctly.
//
// Metered, the set runs with the tick check (Config.WithTickCheck, no fuel
// limit), counting fuel (CountFuel), and on modules loaded for one call
// (LoadOptions.Once: every call a new instance whose initialisers run with
// the tick check too).
func TestHostileSetContained(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		metered, countFuel, once bool
	}{{"tick", true, false, false}, {"fuel", true, true, false}, {"unmetered", false, false, false}, {"once", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			testHostileSet(t, testConfig().WithMetering(tc.metered).WithTickCheck(true), tc.countFuel, tc.once,
				tc.metered && !tc.countFuel && tickLinux())
		})
	}
}

func testHostileSet(t *testing.T, cfg host.Config, countFuel, once, tick bool) {
	h := newHost(t, cfg)
	g := host.Grant{
		AllowedHosts: []string{"*"},
		Limits: host.Limits{
			Timeout: 2 * time.Second, MaxMemoryBytes: 64 << 20, MaxKernelBytes: 16 << 20,
			MaxOutputBytes: 1 << 20, MaxVarBytes: 1 << 20, MaxLogBytes: hostileLogCap,
		},
	}
	mods := map[string]*host.Module{}
	var prime sync.WaitGroup
	for _, c := range hostileCases {
		switch {
		case mods[c.file] != nil:
		case once:
			m, err := h.Load(t.Context(), fixture(t, c.file), host.LoadOptions{Name: c.file, Once: true})
			if err != nil {
				t.Fatal(err)
			}
			mods[c.file] = m
		default:
			mods[c.file] = load(t, h, c.file)
			if !countFuel {
				host.WaitTickCheck(mods[c.file])
				// The first call's instance runs the initialisers,
				// counting fuel; the set's start from its snapshot and
				// run the tick check. Its outcome does not matter.
				prime.Add(1)
				go func(m *host.Module) {
					defer prime.Done()
					pg := g
					pg.Limits.Timeout = 300 * time.Millisecond
					m.Call(t.Context(), c.export, []byte(c.input), &host.CallOptions{Grant: pg})
				}(mods[c.file])
			}
		}
	}
	prime.Wait()
	var ticked atomic.Int32
	good := load(t, h, "wat/echo.wasm")

	stop := make(chan struct{})
	var goodWG sync.WaitGroup
	goodCalls := make([]int, 2)
	for i := range goodCalls {
		goodWG.Add(1)
		go func() {
			defer goodWG.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				want := fmt.Sprintf("good call %d.%d", i, n)
				res, err := call(good, "echo", want, host.Grant{})
				if err != nil || string(res.Output) != want {
					t.Errorf("good call beside the hostile set: %q, %v", res.Output, err)
					return
				}
				goodCalls[i]++
			}
		}()
	}

	var wg sync.WaitGroup
	for round := 0; round < 2; round++ {
		for _, c := range hostileCases {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cg := g
				if c.kind != host.ErrTimeout {
					// Only the timeout cases should meet the deadline; the
					// others end by themselves, slowly on a loaded machine.
					cg.Limits.Timeout = time.Minute
				}
				res, err := mods[c.file].Call(t.Context(), c.export, []byte(c.input), &host.CallOptions{Grant: cg, CountFuel: countFuel})
				if !res.FuelCounted {
					ticked.Add(1)
				}
				name := c.file + ":" + c.export
				switch {
				case c.kind == nil && err != nil:
					t.Errorf("%s: %v", name, err)
				case c.kind != nil && !errors.Is(err, c.kind):
					t.Errorf("%s: err = %v, want %v", name, err, c.kind)
				}
				if c.check != nil {
					c.check(t, res)
				}
			}()
		}
	}
	wg.Wait()
	close(stop)
	goodWG.Wait()
	if goodCalls[0]+goodCalls[1] == 0 {
		t.Error("no good call completed while the hostile set ran")
	}
	if tick && ticked.Load() == 0 {
		t.Error("no call of the hostile set ran with the tick check")
	}
}
