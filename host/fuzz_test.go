package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// FuzzLoadRunsOnlyValidModules holds the host to wazero's validator and
// the rewritten module to the original, for generated modules:
//
//   - a module the rewriter finds malformed, or that wazero refuses to
//     compile, is never loaded (so never run);
//   - a module wazero compiles is loaded, unless it imports what the host
//     does not provide or its tables pass the ceiling;
//   - for a module with no imports, every export of type () -> i32 or
//     () -> () gives the same outcome under the host (rewritten for
//     metering, fresh instance, start function included) as the original
//     under wazero's interpreter: the same return value, or a trap in both.
//     The original runs with its tables bounded as the host bounds them
//     (capTables) and under the host's memory limit, so that neither side
//     allocates what the other would refuse; calls that time out or hit a
//     limit on either side are not compared.
//
// make test runs it for a bounded time (see the Makefile's fuzz target).
func FuzzLoadRunsOnlyValidModules(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "guests", "wat", "*.wasm"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil && len(b) <= 64<<10 {
			f.Add(b)
		}
	}
	module := func(code []byte, sections ...[]byte) []byte {
		body := append([]byte{0x00}, code...)
		b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7f, 3, 2, 1, 0}
		for _, s := range sections {
			b = append(b, s...)
		}
		b = append(b, 7, 7, 1, 3, 'r', 'u', 'n', 0, 0, 10, byte(len(body)+2), 1, byte(len(body)))
		return append(b, body...)
	}
	for _, code := range [][]byte{
		{0x03, 0x40, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xc0, 0x00, 0x24, 0x00, 0x0c, 0x00, 0x0b, 0x41, 0x00, 0x0b},
		{0x23, 0x00, 0x1a, 0x41, 0x00, 0x0b},
		{0x10, 0x05, 0x0b},
		{0x6a, 0x0b},
		{0x41, 0x07, 0x0b},
		{0x00, 0x0b},
		{0x41, 0x00, 0x41, 0x00, 0x6d, 0x0b}, // i32.div_s by zero
	} {
		f.Add(module(code))
		f.Add(module(code, []byte{6, 6, 1, 0x7e, 0x01, 0x42, 0x00, 0x0b}))
	}
	ctx := context.Background()
	cfg := NewConfig()
	h, err := New(ctx, cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close(ctx) })
	// check validates with wazero's defaults; run executes under the
	// host's memory limit.
	check := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	f.Cleanup(func() { check.Close(ctx) })
	run := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().
		WithCloseOnContextDone(true).WithMemoryLimitPages(uint32(cfg.DefaultLimits().MaxMemoryBytes/65536)))
	f.Cleanup(func() { run.Close(ctx) })

	f.Fuzz(func(t *testing.T, wasm []byte) {
		watchdog := time.AfterFunc(20*time.Second, func() {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "input %x took over 20 s:\n%s", wasm, buf[:runtime.Stack(buf, true)])
			os.Exit(2)
		})
		defer watchdog.Stop()
		m, lerr := h.Load(ctx, wasm, LoadOptions{Name: "fuzz.wasm"})
		if _, _, rerr := rewrite.Instrument(wasm, rewrite.Options{}); rerr != nil &&
			(!errors.Is(rerr, rewrite.ErrUnsupported) || errors.Is(rerr, rewrite.ErrUnchecked)) {
			// Malformed, or not checked through: wazero must not see it,
			// since it may allocate by its counts.
			if lerr == nil {
				t.Fatalf("the host loaded a module the rewriter refuses: %v", rerr)
			}
			return
		}
		cm, verr := compileRecovering(ctx, check, wasm)
		if verr != nil {
			if lerr == nil {
				t.Fatalf("the host loaded a module wazero refuses: %v", verr)
			}
			return
		}
		cm.Close(ctx)
		if lerr != nil {
			if errors.Is(lerr, ErrUnknownImport) || strings.Contains(lerr.Error(), "table") {
				return
			}
			t.Fatalf("wazero compiles the module, the host refuses it: %v", lerr)
		}
		capped, err := capTables(wasm, cfg.maxTableElem)
		if err != nil {
			t.Fatalf("the host loaded the module, capTables refuses it: %v", err)
		}
		cm, err = compileRecovering(ctx, run, capped)
		if err != nil {
			return // its memory passes the host's limit
		}
		defer cm.Close(ctx)
		if len(cm.ImportedFunctions()) > 0 {
			return
		}
		exports := cm.ExportedFunctions()
		for _, init := range []string{"_initialize", "__wasm_call_ctors", "hs_init"} {
			if _, ok := exports[init]; ok {
				return // the host runs it first; wazero would not
			}
		}
		names := make([]string, 0, len(exports))
		for name := range exports {
			names = append(names, name)
		}
		sort.Strings(names)
		compared := 0
		for _, name := range names {
			def := exports[name]
			if compared == 4 {
				break // enough to compare; a spinning export costs a timeout
			}
			if len(def.ParamTypes()) != 0 || len(def.ResultTypes()) > 1 ||
				(len(def.ResultTypes()) == 1 && def.ResultTypes()[0] != api.ValueTypeI32) {
				continue
			}
			compared++
			want, ok := runRaw(ctx, run, cm, name)
			if !ok {
				continue
			}
			got, ok := runHost(ctx, m, name)
			if !ok {
				continue
			}
			if got != want {
				t.Fatalf("export %q: the host gives %s, wazero %s", name, got, want)
			}
		}
	})
}

const fuzzCallTimeout = 50 * time.Millisecond

// runRaw runs export in a new instance of cm and describes the outcome;
// ok is false when the call timed out.
func runRaw(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, export string) (outcome string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, fuzzCallTimeout)
	defer cancel()
	mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		if ctx.Err() != nil {
			return "", false
		}
		return "trap", true
	}
	defer mod.Close(context.Background())
	res, err := mod.ExportedFunction(export).Call(ctx)
	switch {
	case ctx.Err() != nil:
		return "", false
	case err != nil:
		return "trap", true
	case len(res) == 1:
		return fmt.Sprintf("return %d", int32(res[0])), true
	}
	return "return 0", true
}

// runHost runs export through the host and describes the outcome in
// runRaw's terms; ok is false when the call timed out or hit a limit the
// raw runtime does not have.
func runHost(ctx context.Context, m *Module, export string) (outcome string, ok bool) {
	res, err := m.Call(ctx, export, nil, &CallOptions{Grant: Grant{Limits: Limits{Timeout: fuzzCallTimeout}}})
	var ce *CallError
	switch {
	case err == nil:
		return "return 0", true
	case errors.Is(err, ErrTimeout), errors.Is(err, ErrLimit):
		return "", false
	case errors.Is(err, ErrGuest) && errors.As(err, &ce):
		return fmt.Sprintf("return %d", res.ReturnCode), true
	case errors.Is(err, ErrTrap):
		return "trap", true
	}
	return "error " + err.Error(), true
}

// compileRecovering compiles wasm, turning a panic inside wazero into an
// error.
func compileRecovering(ctx context.Context, rt wazero.Runtime, wasm []byte) (cm wazero.CompiledModule, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("wazero panicked: %v", p)
		}
	}()
	return rt.CompileModule(ctx, wasm)
}
