package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

// wasmModule assembles a module from raw sections, for the invalid
// modules no WAT assembler would write.
func wasmModule(sections ...[]byte) []byte {
	b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	for _, s := range sections {
		b = append(b, s...)
	}
	return b
}

// section frames a section body; bodies here are under 128 bytes.
func section(id byte, body ...byte) []byte {
	return append([]byte{id, byte(len(body))}, body...)
}

// funcModule is a module of one function of type () -> i32, exported as
// "run", whose code (locals declaration excluded, final end included) is
// code; extra sections go between the function and export sections.
func funcModule(code []byte, extra ...[]byte) []byte {
	body := append([]byte{0x00}, code...) // no locals
	secs := [][]byte{
		section(1, 1, 0x60, 0, 1, 0x7f), // type 0: () -> i32
		section(3, 1, 0),                // one function of type 0
	}
	secs = append(secs, extra...)
	secs = append(secs,
		section(7, 1, 3, 'r', 'u', 'n', 0, 0),
		section(10, append([]byte{1, byte(len(body))}, body...)...),
	)
	return wasmModule(secs...)
}

// Invalid modules are refused before the rewriter or wazero's compiler
// runs them: the 60-byte module that wrote global 0 while defining no
// globals used to be accepted, its global.set then naming the budget the
// rewriter appended, so that it refilled its own budget forever and
// defeated every deadline.
func TestInvalidModulesAreRefused(t *testing.T) {
	cases := map[string][]byte{
		// loop: i64.const 2^62; global.set 0; br 0 — with no globals.
		"global.set of a global that does not exist": funcModule([]byte{
			0x03, 0x40, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xc0, 0x00, 0x24, 0x00, 0x0c, 0x00, 0x0b,
			0x41, 0x00, 0x0b}),
		"global.get of a global that does not exist": funcModule([]byte{0x23, 0x00, 0x1a, 0x41, 0x00, 0x0b}),
		// One global (i32, immutable), written by global.set.
		"global.set of an immutable global": funcModule([]byte{0x41, 0x01, 0x24, 0x00, 0x41, 0x00, 0x0b},
			section(6, 1, 0x7f, 0x00, 0x41, 0x00, 0x0b)),
		"call of a function that does not exist":   funcModule([]byte{0x10, 0x05, 0x0b}),
		"i32.add on an empty stack":                funcModule([]byte{0x6a, 0x0b}),
		"returns an i64 for an i32":                funcModule([]byte{0x42, 0x00, 0x0b}),
		"br to a label that does not exist":        funcModule([]byte{0x0c, 0x03, 0x41, 0x00, 0x0b}),
		"local.get of a local that does not exist": funcModule([]byte{0x20, 0x00, 0x0b}),
	}
	for _, metering := range []bool{true, false} {
		h := newHost(t, testConfig().WithMetering(metering))
		for name, wasm := range cases {
			_, err := h.Load(t.Context(), wasm, host.LoadOptions{Name: "invalid.wasm"})
			if !errors.Is(err, host.ErrInvalidModule) {
				t.Errorf("metering %v: %s: Load err = %v, want ErrInvalidModule", metering, name, err)
				continue
			}
			if !strings.Contains(err.Error(), "invalid.wasm") {
				t.Errorf("metering %v: %s: %q does not name the module", metering, name, err)
			}
		}
	}
	// The well-formed twin of the first case (a global of its own) loads
	// and is stopped at its deadline.
	h := newHost(t, testConfig())
	twin := funcModule([]byte{
		0x03, 0x40, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xc0, 0x00, 0x24, 0x00, 0x0c, 0x00, 0x0b,
		0x41, 0x00, 0x0b}, section(6, 1, 0x7e, 0x01, 0x42, 0x00, 0x0b))
	m, err := h.Load(t.Context(), twin, host.LoadOptions{Name: "twin.wasm"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = m.Call(t.Context(), "run", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{Timeout: 100 * time.Millisecond}}})
	wantKind(t, err, host.ErrTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 100 ms deadline stopped the guest after %v", d)
	}
}

// A start function runs during instantiation: under the call's deadline,
// on the metered runtime and on the close-on-context-done fallback, and
// while it spins, garbage collection and other calls go on.
func TestStartFunctionRunsUnderTheDeadline(t *testing.T) {
	for _, metering := range []bool{true, false} {
		h := newHost(t, testConfig().WithMetering(metering).WithTickCheck(true))
		spin := load(t, h, "wat/start_spin.wasm")
		good := load(t, h, "wat/echo.wasm")
		host.WaitTickCheck(spin) // with the tick check, when metered on Linux
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := spin.Call(context.Background(), "run", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{Timeout: 300 * time.Millisecond}}})
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		gc := make(chan struct{})
		go func() { runtime.GC(); close(gc) }()
		select {
		case <-gc:
		case <-time.After(10 * time.Second):
			t.Fatalf("metering %v: garbage collection stalled behind a spinning start function", metering)
		}
		if got := mustCall(t, good, "echo", "still serving", host.Grant{}); got != "still serving" {
			t.Errorf("metering %v: echo = %q", metering, got)
		}
		select {
		case err := <-done:
			wantKind(t, err, host.ErrTimeout)
		case <-time.After(10 * time.Second):
			t.Fatalf("metering %v: the spinning start function was not stopped", metering)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("metering %v: a 300 ms deadline stopped the start function after %v", metering, d)
		}
	}
}

// A benign start function runs once per instance and its logs reach the
// call that created the instance.
func TestBenignStartFunction(t *testing.T) {
	for _, metering := range []bool{true, false} {
		h := newHost(t, testConfig().WithMetering(metering))
		m := load(t, h, "wat/start.wasm")
		for i := 0; i < 3; i++ {
			res, err := call(m, "run", "", host.Grant{})
			if err != nil {
				t.Fatalf("metering %v, call %d: %v", metering, i, err)
			}
			if string(res.Output) != "1" {
				t.Errorf("metering %v, call %d: the start function did not run: %q", metering, i, res.Output)
			}
			if i == 0 && (len(res.Logs) != 1 || res.Logs[0].Message != "started") {
				t.Errorf("metering %v: first call's logs = %+v, want the start function's", metering, res.Logs)
			}
		}
		// A spinning initialisation is cut by the host's initialisation
		// fuel cap too, whatever the deadline: the instance that runs the
		// initialisers counts fuel, also for a call that would otherwise
		// run the tick check, and also once the module with it is made.
		if metering {
			h := newHost(t, testConfig().WithMaxInitFuel(1_000_000).WithTickCheck(true))
			m := load(t, h, "wat/start_spin.wasm")
			for i, opts := range []*host.CallOptions{{CountFuel: true}, nil, nil} {
				if i == 2 {
					host.WaitTickCheck(m)
				}
				_, err := m.Call(t.Context(), "run", nil, opts)
				ce := wantKind(t, err, host.ErrLimit)
				if !strings.Contains(ce.Message, "initialisation fuel") {
					t.Errorf("call %d: message %q does not name the initialisation fuel", i, ce.Message)
				}
			}
		}
	}
}

// Each piece of state an instance holds between calls is written or
// disturbed by one call and looked for by the next: the next call, on a
// restored instance, must find what a new instance would.
func TestFreshStateLeavesNothingBehind(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/fresh.wasm")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leak.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mount := host.Grant{Mounts: []host.Mount{{HostPath: dir, GuestPath: "/data", ReadOnly: true}}}

	t.Run("kernel memory", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			if got := mustCall(t, m, "echo", "the previous caller's secret", host.Grant{}); got != "the previous caller's secret" {
				t.Fatalf("echo = %q", got)
			}
			if got := mustCall(t, m, "scan_kernel", "", host.Grant{}); got != "0" {
				t.Fatalf("after a call, kernel memory holds %s non-zero bytes for the next", got)
			}
		}
	})
	t.Run("preopen closed", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			if got := mustCall(t, m, "close_fd", "3", mount); got != "0" {
				t.Fatalf("fd_close(3) = %s", got)
			}
			if got := mustCall(t, m, "prestat", "3", mount); got != "0" {
				t.Fatalf("after a call closed the mount's descriptor, fd_prestat_get(3) = %s, want 0", got)
			}
		}
	})
	t.Run("stdout closed", func(t *testing.T) {
		mustCall(t, m, "close_fd", "1", host.Grant{})
		res, err := call(m, "say", "", host.Grant{})
		if err != nil || string(res.Output) != "0" || len(res.Logs) != 1 || res.Logs[0].Message != "hello\n" {
			t.Fatalf("after a call closed stdout: output %q, logs %+v, %v", res.Output, res.Logs, err)
		}
	})
	t.Run("file left open", func(t *testing.T) {
		fd := mustCall(t, m, "open_leak", "", mount)
		if len(fd) > 3 {
			t.Fatalf("open_leak could not open leak.txt: 1000 + errno = %s", fd)
		}
		if got := mustCall(t, m, "read_fd", fd, mount); got != "8" {
			t.Fatalf("the next call read descriptor %s left open: errno %s, want 8 (EBADF)", fd, got)
		}
	})
	t.Run("descriptor renumbered onto stdout", func(t *testing.T) {
		mustCall(t, m, "renumber", "", mount)
		res, err := call(m, "say", "", mount)
		if err != nil || len(res.Logs) != 1 || res.Logs[0].Message != "hello\n" {
			t.Fatalf("after a call renumbered a file onto stdout: logs %+v, %v", res.Logs, err)
		}
	})
	t.Run("proc_exit", func(t *testing.T) {
		if _, err := call(m, "exit0", "", host.Grant{}); err != nil {
			t.Fatalf("proc_exit(0): %v", err)
		}
		if got := mustCall(t, m, "echo", "after exit", host.Grant{}); got != "after exit" {
			t.Fatalf("echo after a proc_exit = %q", got)
		}
	})
	t.Run("vars", func(t *testing.T) {
		mustCall(t, m, "set_var", "secret", host.Grant{})
		if got := mustCall(t, m, "get_var", "", host.Grant{}); got != "none" {
			t.Fatalf("the next call read var %q", got)
		}
	})
	t.Run("http state", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
		defer srv.Close()
		net := host.Grant{AllowedHosts: []string{"127.0.0.1"}, AllowPrivateNetwork: true}
		if got := mustCall(t, m, "fetch", srv.URL, net); got != "418" {
			t.Fatalf("fetch = %s", got)
		}
		if got := mustCall(t, m, "http_status", "", net); got != "0" {
			t.Fatalf("the next call saw the last HTTP status %s", got)
		}
	})
	t.Run("tables", func(t *testing.T) {
		seg := load(t, h, "wat/segments.wasm")
		mustCall(t, seg, "set_table", "", host.Grant{})
		_, err := call(seg, "call_table", "", host.Grant{})
		wantKind(t, err, host.ErrTrap)
	})
	t.Run("passive data segment", func(t *testing.T) {
		seg := load(t, h, "wat/segments.wasm")
		mustCall(t, seg, "drop_data", "", host.Grant{})
		if got := mustCall(t, seg, "init_data", "", host.Grant{}); got != "seg!" {
			t.Fatalf("init_data = %q", got)
		}
	})
}

// Tables count against the host's table ceiling: declared (refused at
// load) and grown (table.grow fails past it).
func TestTablesAreBounded(t *testing.T) {
	h := newHost(t, testConfig().WithMaxTableElements(4096))
	m := load(t, h, "wat/tables.wasm")
	if got := mustCall(t, m, "grow", "1000", host.Grant{}); got != "4000" {
		t.Errorf("growing by 1000 under a 4096 ceiling reached %s elements, want 4000", got)
	}
	if got := mustCall(t, m, "grow", "", host.Grant{}); got != "0" {
		t.Errorf("one grow of 2^20 under a 4096 ceiling reached %s elements, want 0", got)
	}
	// The default ceiling, 2^20 elements (8 MiB of host memory).
	d := load(t, newHost(t, testConfig()), "wat/tables.wasm")
	if got := mustCall(t, d, "grow", "", host.Grant{}); got != "1048576" {
		t.Errorf("growing by 2^20 under the default ceiling reached %s elements", got)
	}

	// (table 134217728 funcref): 2^27 elements declared.
	big := funcModule([]byte{0x41, 0x00, 0x0b}, section(4, 1, 0x70, 0x00, 0x80, 0x80, 0x80, 0x40))
	_, err := h.Load(t.Context(), big, host.LoadOptions{Name: "bigtable.wasm"})
	if !errors.Is(err, host.ErrInvalidModule) || !strings.Contains(err.Error(), "table elements") {
		t.Errorf("a 2^27-element table: err = %v, want ErrInvalidModule naming the table elements", err)
	}
	// Tables share the ceiling: two of 2048 fit in 4096, three do not.
	two := funcModule([]byte{0x41, 0x00, 0x0b}, section(4, 2, 0x70, 0x00, 0x80, 0x10, 0x70, 0x00, 0x80, 0x10))
	if _, err := h.Load(t.Context(), two, host.LoadOptions{Name: "twotables.wasm"}); err != nil {
		t.Errorf("two tables of 2048 under a 4096 ceiling: %v", err)
	}
	three := funcModule([]byte{0x41, 0x00, 0x0b}, section(4, 3, 0x70, 0x00, 0x80, 0x10, 0x70, 0x00, 0x80, 0x10, 0x70, 0x00, 0x80, 0x10))
	if _, err := h.Load(t.Context(), three, host.LoadOptions{Name: "threetables.wasm"}); !errors.Is(err, host.ErrInvalidModule) {
		t.Errorf("three tables of 2048 under a 4096 ceiling: err = %v, want ErrInvalidModule", err)
	}
}

// Many small host-side allocations are charged for what the host keeps
// besides their bytes: a flood of one-byte logs or kernel blocks is held to
// its cap like one large write.
func TestSmallAllocationsCountTheirOverhead(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/fresh.wasm")
	res, err := call(m, "log_many", "2000000", host.Grant{Limits: host.Limits{MaxLogBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.LogsTruncated || len(res.Logs) > (1<<20)/64 {
		t.Errorf("2M one-byte logs under a 1 MiB cap kept %d entries (truncated %v), want at most %d", len(res.Logs), res.LogsTruncated, (1<<20)/64)
	}
	_, err = call(m, "alloc_many", "2000000", host.Grant{Limits: host.Limits{MaxKernelBytes: 1 << 20}})
	wantKind(t, err, host.ErrLimit)
}

// A valid module the rewriter cannot rewrite runs on the fallback runtime,
// and its start function too is stopped at the call's deadline there. This
// one holds an instruction wazero reads differently from the spec (0xfd
// 0x93 0x1a: i16x8.sub_sat_u then drop to wazero, an unknown SIMD
// sub-opcode to the rewriter) and a start function that spins.
func TestFallbackModuleStartFunctionIsStopped(t *testing.T) {
	v128zero := append([]byte{0xfd, 0x0c}, make([]byte, 16)...)
	run := append(append(append([]byte{0x00}, v128zero...), v128zero...), 0xfd, 0x93, 0x1a, 0x41, 0x00, 0x0b)
	spin := []byte{0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b} // loop br 0 end end
	code := append([]byte{2, byte(len(spin))}, spin...)
	code = append(append(code, byte(len(run))), run...)
	wasm := wasmModule(
		section(1, 2, 0x60, 0, 0, 0x60, 0, 1, 0x7f), // () -> (), () -> i32
		section(3, 2, 0, 1),
		section(7, 1, 3, 'r', 'u', 'n', 0, 1),
		section(8, 0), // start: function 0
		section(10, code...),
	)
	h := newHost(t, testConfig())
	m, err := h.Load(t.Context(), wasm, host.LoadOptions{Name: "padded.wasm"})
	if err != nil {
		t.Fatal(err)
	}
	if metered, why := m.Metered(); metered || why == nil {
		t.Fatalf("Metered() = %v, %v: the module should run on the fallback runtime", metered, why)
	}
	start := time.Now()
	_, err = m.Call(t.Context(), "run", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{Timeout: 200 * time.Millisecond}}})
	wantKind(t, err, host.ErrTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 200 ms deadline stopped the start function after %v", d)
	}
}

// A tool called by a guest runs under its caller's deadline: the callee
// says that the caller's deadline, not its own timeout, stopped it, and the
// caller is stopped too, even if it could still return in time.
func TestNestedCallsShareTheCallersDeadline(t *testing.T) {
	h := newHost(t, testConfig())
	spin := load(t, h, "wat/loop.wasm")
	caller := load(t, h, "wat/tool_call.wasm")
	var calleeErr error
	tools := host.ToolDispatcherFunc(func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
		_, calleeErr = spin.Call(ctx, "spin", nil, nil) // its own timeout: the 30 s default
		var ce *host.CallError
		errors.As(calleeErr, &ce)
		return abi.ToolResult{IsError: true, Error: ce.ABIError()}
	})
	start := time.Now()
	_, err := caller.Call(t.Context(), "call_tool", []byte("spin"), &host.CallOptions{
		Grant: host.Grant{Tools: []string{"spin"}, Limits: host.Limits{Timeout: 300 * time.Millisecond}},
		Tools: tools,
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a 300 ms caller ran %v", d)
	}
	wantKind(t, err, host.ErrTimeout)
	ce := wantKind(t, calleeErr, host.ErrTimeout)
	if !strings.Contains(ce.Message, "caller's deadline") {
		t.Errorf("the callee's timeout message %q does not say the caller's deadline stopped it", ce.Message)
	}
}
