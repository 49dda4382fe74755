package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
)

// The Extism go-sdk is the compatibility oracle: every module below must
// give the same output, or fail the same way, under both hosts.

var (
	// extismCache keeps go-sdk from compiling the same module per case.
	extismCache   = mustCache(testCacheDir)
	extismDirOnce sync.Once
	extismDir     string
	extismDirErr  error
)

// extismWasmDir returns the wasm/ folder of the go-sdk module, which ships
// plugins built with the Extism PDKs by others.
func extismWasmDir(t testing.TB) string {
	extismDirOnce.Do(func() {
		dir, err := testenv.ModuleDir("github.com/extism/go-sdk")
		if err == nil {
			extismDir = filepath.Join(dir, "wasm")
		} else {
			extismDirErr = err
		}
	})
	if extismDir == "" {
		t.Fatalf("cannot locate the github.com/extism/go-sdk module: %v", extismDirErr)
	}
	return extismDir
}

type oracleCase struct {
	name   string
	file   string // path, or "extism:<file>" for the go-sdk's wasm folder
	export string
	input  string
	config map[string]string
	// mount maps a guest path to a fresh temp dir holding these files.
	files map[string]string
	guest string
	// maxPages caps linear memory in both hosts.
	maxPages uint32
}

func (c oracleCase) path(t testing.TB) string {
	if f, ok := strings.CutPrefix(c.file, "extism:"); ok {
		return filepath.Join(extismWasmDir(t), f)
	}
	return filepath.Join("..", c.file)
}

var oracleCases = []oracleCase{
	// Plugins built by others with the Extism PDKs (Rust, Go, C, Haskell, ...).
	{name: "count_vowels", file: "extism:count_vowels.wasm", export: "count_vowels", input: "Hello, World!"},
	{name: "count_vowels empty", file: "extism:count_vowels.wasm", export: "count_vowels"},
	{name: "hello", file: "extism:hello.wasm", export: "run_test"},
	{name: "fail", file: "extism:fail.wasm", export: "run_test"},
	{name: "alloc", file: "extism:alloc.wasm", export: "run_test"},
	{name: "config", file: "extism:config.wasm", export: "run_test", config: map[string]string{"thing": "a value"}},
	{name: "config missing", file: "extism:config.wasm", export: "run_test"},
	{name: "var", file: "extism:var.wasm", export: "run_test"},
	{name: "log", file: "extism:log.wasm", export: "run_test"},
	{name: "exit", file: "extism:exit.wasm", export: "_start"},
	{name: "haskell", file: "extism:hello_haskell.wasm", export: "testing", input: "Haskell"},
	{name: "input_offset", file: "extism:input_offset.wasm", export: "input_offset_length", input: "some input"},
	{name: "noop", file: "extism:noop.wasm", export: "run_test"},
	{name: "println", file: "extism:println.wasm", export: "run_test"},
	{name: "sleep", file: "extism:sleep.wasm", export: "run_test", config: map[string]string{"duration": "1"}},
	{name: "fs", file: "extism:fs.wasm", export: "run_test", files: map[string]string{"test.txt": "hello from the host"}, guest: "/mnt"},
	{name: "fs without mount", file: "extism:fs.wasm", export: "run_test"},
	{name: "fs_std", file: "extism:fs_std.wasm", export: "run_test", files: map[string]string{"test.txt": "hello std"}, guest: "/mnt"},
	{name: "read_write", file: "extism:read_write.wasm", export: "try_write", files: map[string]string{"test.txt": "x"}, guest: "/mnt"},

	// skillhost's own fixtures.
	{name: "wat echo", file: "testdata/guests/wat/echo.wasm", export: "echo", input: "round trip \x00\xff bytes"},
	{name: "wat fail", file: "testdata/guests/wat/echo.wasm", export: "fail"},
	{name: "wat fail_json", file: "testdata/guests/wat/echo.wasm", export: "fail_json"},
	{name: "wat rc7", file: "testdata/guests/wat/echo.wasm", export: "rc7"},
	{name: "wat noop", file: "testdata/guests/wat/echo.wasm", export: "noop"},
	{name: "wat config", file: "testdata/guests/wat/echo.wasm", export: "config", input: "greeting", config: map[string]string{"greeting": "hi"}},
	{name: "wat vars", file: "testdata/guests/wat/echo.wasm", export: "vars"},
	{name: "wat trap", file: "testdata/guests/wat/trap.wasm", export: "trap"},
	{name: "wat oob", file: "testdata/guests/wat/trap.wasm", export: "oob"},
	{name: "wat recurse", file: "testdata/guests/wat/recurse.wasm", export: "recurse"},
	{name: "wat loop_count", file: "testdata/guests/wat/loop_count.wasm", export: "count", input: "1000"},
	{name: "wat membomb capped", file: "testdata/guests/wat/membomb.wasm", export: "grow_trap", maxPages: 16},
	{name: "wat log", file: "testdata/guests/wat/echo.wasm", export: "log", input: "logged"},
	{name: "go echo", file: "testdata/guests/go/gobench/gobench.wasm", export: "echo", input: "go guest"},
	{name: "go noop", file: "testdata/guests/go/gobench/gobench.wasm", export: "noop"},
	{name: "go intloop", file: "testdata/guests/go/gobench/gobench.wasm", export: "intloop", input: "1000"},
	{name: "go sha256", file: "testdata/guests/go/gobench/gobench.wasm", export: "sha256", input: "3"},
	{name: "go sort", file: "testdata/guests/go/gobench/gobench.wasm", export: "sort", input: "1000"},
	{name: "go panic", file: "testdata/guests/go/gohostile/gohostile.wasm", export: "panic"},
	{name: "go fs_escape", file: "testdata/guests/go/gohostile/gohostile.wasm", export: "fs_escape", input: "/etc/passwd"},
	{name: "go env", file: "testdata/guests/go/gocaps/gocaps.wasm", export: "environ"},
	{name: "go read_file", file: "testdata/guests/go/gocaps/gocaps.wasm", export: "read_file", input: "/data/a.txt", files: map[string]string{"a.txt": "abc"}, guest: "/data"},
	{name: "go write_file", file: "testdata/guests/go/gocaps/gocaps.wasm", export: "write_file", input: "/data/b.txt", files: map[string]string{"a.txt": "abc"}, guest: "/data"},
	{name: "go list_dir", file: "testdata/guests/go/gocaps/gocaps.wasm", export: "list_dir", input: "/data", files: map[string]string{"a.txt": "abc", "b.txt": ""}, guest: "/data"},
	{name: "go tool_call refused", file: "testdata/guests/go/gocaps/gocaps.wasm", export: "call_tool", input: `{"name":"slugify","args":{"text":"x"}}`},
	{name: "wat tool_call refused", file: "testdata/guests/wat/tool_call.wasm", export: "call_tool", input: "slugify"},
	{name: "wat capability_call refused", file: "testdata/guests/wat/tool_call.wasm", export: "call_cap", input: "mail.send"},
	{name: "rust noop", file: "guests/rust/examples/textstats/textstats.wasm", export: "noop"},
	{name: "rust echo", file: "guests/rust/examples/textstats/textstats.wasm", export: "echo", input: "ferris"},
	{name: "rust count_vowels", file: "guests/rust/examples/textstats/textstats.wasm", export: "count_vowels", input: "Hello, World!"},
}

type outcome struct {
	output string
	failed bool
	// message is the guest's error_set text, when it set one.
	message string
	rc      uint32
}

func runSkillhost(t *testing.T, h *host.Host, c oracleCase, wasm []byte, mount string) outcome {
	t.Helper()
	m, err := h.Load(context.Background(), wasm, host.LoadOptions{Name: c.file})
	if err != nil {
		t.Fatalf("skillhost load: %v", err)
	}
	g := host.Grant{Config: c.config}
	if mount != "" {
		g.Mounts = []host.Mount{{HostPath: mount, GuestPath: c.guest}}
	}
	if c.maxPages != 0 {
		g.Limits.MaxMemoryBytes = uint64(c.maxPages) << 16
	}
	res, err := m.Call(context.Background(), c.export, []byte(c.input), &host.CallOptions{Grant: g})
	o := outcome{output: string(res.Output), rc: uint32(res.ReturnCode)}
	if err != nil {
		o.failed, o.output = true, ""
		var ce *host.CallError
		if errors.As(err, &ce) && ce.Guest != nil {
			o.message = ce.Message
			if ce.Guest.Code != "guest_error" {
				o.message = "" // compared below through the raw JSON
			}
		}
		if !errors.As(err, &ce) {
			t.Fatalf("skillhost call: error %v is not a *host.CallError", err)
		}
		if ce.Kind != host.ErrGuest {
			o.rc = 0 // a trap has no return code
		}
	}
	return o
}

func runExtism(t *testing.T, c oracleCase, wasm []byte, mount string) outcome {
	t.Helper()
	ctx := context.Background()
	man := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, Config: c.config, Timeout: 120000}
	if mount != "" {
		man.AllowedPaths = map[string]string{mount: c.guest}
	}
	if c.maxPages != 0 {
		man.Memory = &extism.ManifestMemory{MaxPages: c.maxPages}
	}
	p, err := extism.NewPlugin(ctx, man, extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(extismCache),
		ModuleConfig:  wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime().WithSysNanosleep(),
	}, extismUserFuncs())
	if err != nil {
		t.Fatalf("extism load: %v", err)
	}
	defer p.Close(ctx)
	rc, out, err := p.Call(c.export, []byte(c.input))
	o := outcome{output: string(out), rc: rc}
	if err != nil {
		o.failed, o.output = true, ""
		if p.GetError() == "" {
			o.rc = 0 // a trap has no return code
		}
		if p.GetError() != "" && !strings.HasPrefix(strings.TrimSpace(p.GetError()), "{") {
			o.message = err.Error()
		}
	} else if rc != 0 {
		// go-sdk reports a non-zero code without an error as success;
		// skillhost reports it as a failure with the code.
		o.failed, o.output = true, ""
	}
	return o
}

func TestExtismOracle(t *testing.T) {
	h := newHost(t, testConfig().WithDefaultLimits(host.Limits{Timeout: 120 * time.Second}))
	for _, c := range oracleCases {
		t.Run(c.name, func(t *testing.T) {
			wasm, err := os.ReadFile(c.path(t))
			if err != nil {
				t.Fatal(err)
			}
			var mounts [2]string
			if c.files != nil {
				for i := range mounts {
					mounts[i] = t.TempDir()
					for name, body := range c.files {
						if err := os.WriteFile(filepath.Join(mounts[i], name), []byte(body), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			want := runExtism(t, c, wasm, mounts[0])
			got := runSkillhost(t, h, c, wasm, mounts[1])
			if got != want {
				t.Errorf("skillhost %+v, extism go-sdk %+v", got, want)
			}
			if c.files != nil {
				// Both hosts must leave the mounted folder in the same state.
				a, b := dirState(t, mounts[0]), dirState(t, mounts[1])
				if a != b {
					t.Errorf("mounted folder after the call: skillhost %q, extism %q", b, a)
				}
			}
		})
	}
}

// extismUserFuncs gives go-sdk the two skillhost functions of
// extism:host/user, answering as skillhost does when a call has no
// dispatcher or provider — showing an Extism host can serve them.
func extismUserFuncs() []extism.HostFunction {
	answer := func(msg string) func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		return func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			off, err := p.WriteBytes([]byte(msg))
			if err != nil {
				panic(err)
			}
			stack[0] = off
		}
	}
	i64 := []extism.ValueType{extism.ValueTypeI64}
	tool := extism.NewHostFunctionWithStack("tool_call",
		answer(`{"is_error":true,"error":{"code":"permission_denied","message":"tool \"slugify\" is not among the tools this module may call"}}`),
		append(i64, i64...), i64)
	tool.SetNamespace("extism:host/user")
	cap := extism.NewHostFunctionWithStack("capability_call",
		answer(`{"is_error":true,"error":{"code":"permission_denied","message":"capability \"mail.send\" is not granted to this module"}}`),
		append(i64, i64...), i64)
	cap.SetNamespace("extism:host/user")
	return []extism.HostFunction{tool, cap}
}

func mustCache(dir string) wazero.CompilationCache {
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		panic(err)
	}
	return c
}

func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + "=" + string(data) + ";")
	}
	return b.String()
}
