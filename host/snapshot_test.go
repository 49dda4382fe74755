package host_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

// A restore brings back every byte of memory and every global however much
// of the memory the call wrote: one page, every page, every page of a grown
// memory, pages the host filled (WASI random_get), or none; calls run at
// once from several goroutines, so that new instances restored from the
// snapshot without initialisation serve some of them. Every call must find
// the memory as the first call found it.
func TestRestoreAfterDirtyingPages(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/pages.wasm")
	want := mustCall(t, m, "touch_none", "", host.Grant{})
	exports := []string{"touch_one", "touch_all", "grow", "random", "touch_none"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				export := exports[(g+i)%len(exports)]
				res, err := call(m, export, "", host.Grant{})
				if err != nil {
					t.Errorf("%s: %v", export, err)
					return
				}
				if string(res.Output) != want {
					t.Errorf("goroutine %d call %d (%s) found checksum %s, want %s: state leaked", g, i, export, res.Output, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	// The pool of a trusted caller keeps what calls write.
	p, err := m.NewPool(host.CallOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first, err := p.Call(t.Context(), "touch_one", nil)
	if err != nil || string(first.Output) != want {
		t.Fatalf("pool's first call: %q, %v", first.Output, err)
	}
	second, err := p.Call(t.Context(), "touch_one", nil)
	if err != nil || string(second.Output) == want {
		t.Fatalf("pool's second call found fresh memory: %q, %v", second.Output, err)
	}
	// random's writes reach memory (so the fresh calls above restored them).
	third, err := p.Call(t.Context(), "random", nil)
	if err != nil {
		t.Fatal(err)
	}
	fourth, err := p.Call(t.Context(), "random", nil)
	if err != nil || string(fourth.Output) == string(third.Output) {
		t.Fatalf("random_get changed nothing in memory: %q then %q, %v", third.Output, fourth.Output, err)
	}
}

// Warm-up calls run once, before the snapshot fresh-state calls start from:
// what they leave in memory and globals is in every call's state, and
// nothing else of theirs — output, logs, vars, errors — reaches a call or
// its log sink. A failed warm-up leaves the calls as they were without it.
func TestWarmupIsInTheSnapshotAndNothingElse(t *testing.T) {
	h := newHost(t, testConfig())
	ctx := t.Context()
	loadWarm := func(rel string, warmup ...host.WarmupCall) *host.Module {
		t.Helper()
		m, err := h.Load(ctx, fixture(t, rel), host.LoadOptions{Name: rel, Warmup: warmup})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	// state.wasm's bump adds 1 to a global and a word: after a warm-up
	// bump, every call finds 1 in both, from any instance.
	state := loadWarm("wat/state.wasm", host.WarmupCall{Export: "bump"})
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if got := mustCall(t, state, "bump", "", host.Grant{}); got != "2002" {
					t.Errorf("goroutine %d call %d: bump = %s, want 2002", g, i, got)
					return
				}
			}
		}()
	}
	wg.Wait()

	// echo.wasm's warm-ups log, set a var and set an output.
	echo := loadWarm("wat/echo.wasm",
		host.WarmupCall{Export: "log", Input: []byte("warm-up log")},
		host.WarmupCall{Export: "vars"},
		host.WarmupCall{Export: "echo", Input: []byte("warm-up output")})
	var sunk []host.LogEntry
	opts := &host.CallOptions{OnLog: func(e host.LogEntry) { sunk = append(sunk, e) }}
	res, err := echo.Call(ctx, "log", []byte("call log"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logs) != 1 || res.Logs[0].Message != "call log" || len(sunk) != 1 || sunk[0].Message != "call log" {
		t.Errorf("logs %v, sink %v: want the call's one entry", res.Logs, sunk)
	}
	if got := mustCall(t, echo, "vars", "", host.Grant{}); got != "1" {
		t.Errorf("vars = %s after a warm-up that set one: want 1", got)
	}
	if res, err := echo.Call(ctx, "noop", nil, nil); err != nil || len(res.Output) != 0 {
		t.Errorf("noop after a warm-up echo: %q, %v", res.Output, err)
	}

	// A failing warm-up: calls run as without one.
	failing := loadWarm("wat/echo.wasm", host.WarmupCall{Export: "vars"}, host.WarmupCall{Export: "fail"})
	if got := mustCall(t, failing, "vars", "", host.Grant{}); got != "1" {
		t.Errorf("after a failed warm-up: vars = %s, want 1", got)
	}
	coded := loadWarm("wat/state.wasm", host.WarmupCall{Export: "bump"}, host.WarmupCall{Export: "grow"})
	for range 3 {
		if got := mustCall(t, coded, "bump", "", host.Grant{}); got != "2002" {
			t.Errorf("after a warm-up that grew memory: bump = %s, want 2002", got)
		}
	}

	// A warm-up names a callable export.
	if _, err := h.Load(ctx, fixture(t, "wat/state.wasm"), host.LoadOptions{Warmup: []host.WarmupCall{{Export: "nope"}}}); !errors.Is(err, host.ErrExportNotFound) {
		t.Errorf("warm-up of a missing export: %v, want ErrExportNotFound", err)
	}
}

// A warm-up that spins is stopped like an initialiser: the call it was made
// for times out, and later calls run without warm-up.
func TestWarmupThatSpinsIsStopped(t *testing.T) {
	h := newHost(t, testConfig())
	m, err := h.Load(t.Context(), fixture(t, "go/gohostile/gohostile.wasm"), host.LoadOptions{Warmup: []host.WarmupCall{{Export: "spin"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(m, "sleep", "1", host.Grant{Limits: host.Limits{Timeout: 300 * time.Millisecond}})
	if !errors.Is(err, host.ErrTimeout) {
		t.Fatalf("first call: %v, want a timeout", err)
	}
	if got := mustCall(t, m, "sleep", "1", host.Grant{}); got != "slept" {
		t.Fatalf("a later call: %q", got)
	}
}
