package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/internal/testenv"
)

// testCacheDir is the compilation cache every test host shares.
var testCacheDir = testenv.CacheDir()

// testConfig is the default configuration with the shared test cache.
func testConfig() host.Config { return host.NewConfig().WithCacheDir(testCacheDir) }

func newHost(t testing.TB, cfg host.Config) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "guests", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func load(t testing.TB, h *host.Host, rel string) *host.Module {
	t.Helper()
	m, err := h.Load(context.Background(), fixture(t, rel), host.LoadOptions{Name: rel})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func call(m *host.Module, export, input string, g host.Grant) (*host.Result, error) {
	return m.Call(context.Background(), export, []byte(input), &host.CallOptions{Grant: g})
}

func mustCall(t testing.TB, m *host.Module, export, input string, g host.Grant) string {
	t.Helper()
	res, err := call(m, export, input, g)
	if err != nil {
		t.Fatalf("%s(%q): %v", export, input, err)
	}
	return string(res.Output)
}

func wantKind(t testing.TB, err error, kind error) *host.CallError {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	var ce *host.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v is not a *host.CallError", err)
	}
	return ce
}

func TestLoadRefusesUnknownImports(t *testing.T) {
	h := newHost(t, testConfig())
	for file, mention := range map[string]string{
		"wat/unknown_import.wasm":   "env.evil",
		"wat/unknown_env_func.wasm": "extism:host/env.not_a_function",
		"wat/bad_signature.wasm":    "extism:host/env.alloc",
		"wat/fuel_import.wasm":      "skillhost:fuel.refuel",
	} {
		t.Run(file, func(t *testing.T) {
			_, err := h.Load(context.Background(), fixture(t, file), host.LoadOptions{Name: file})
			if !errors.Is(err, host.ErrUnknownImport) {
				t.Fatalf("err = %v, want ErrUnknownImport", err)
			}
			if !strings.Contains(err.Error(), mention) || !strings.Contains(err.Error(), file) {
				t.Errorf("error %q should name the module and the import %q", err, mention)
			}
		})
	}
}

func TestLoadHashPinAndGarbage(t *testing.T) {
	h := newHost(t, testConfig())
	wasm := fixture(t, "wat/echo.wasm")
	sum := sha256.Sum256(wasm)
	good := hex.EncodeToString(sum[:])
	if _, err := h.Load(context.Background(), wasm, host.LoadOptions{SHA256: good}); err != nil {
		t.Errorf("matching pin refused: %v", err)
	}
	if _, err := h.Load(context.Background(), wasm, host.LoadOptions{SHA256: "sha256:" + strings.ToUpper(good)}); err != nil {
		t.Errorf("matching pin with prefix and upper case refused: %v", err)
	}
	bad := strings.Repeat("0", 64)
	if _, err := h.Load(context.Background(), wasm, host.LoadOptions{Name: "echo", SHA256: bad}); !errors.Is(err, host.ErrHashMismatch) {
		t.Errorf("wrong pin: err = %v, want ErrHashMismatch", err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("not wasm at all"),
		"truncated": wasm[:len(wasm)/2],
		// A type section claiming 2^32-1 entries in 5 bytes: wazero would
		// try to allocate for all of them before reading any.
		"huge count": {0, 'a', 's', 'm', 1, 0, 0, 0, 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		for _, hh := range []*host.Host{h, newHost(t, testConfig().WithMetering(false))} {
			if _, err := hh.Load(context.Background(), b, host.LoadOptions{Name: name}); !errors.Is(err, host.ErrInvalidModule) {
				t.Errorf("%s: err = %v, want ErrInvalidModule", name, err)
			}
		}
	}
}

func TestCallBasics(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/echo.wasm")
	if got := mustCall(t, m, "echo", "héllo\x00", host.Grant{}); got != "héllo\x00" {
		t.Errorf("echo = %q", got)
	}
	if got := mustCall(t, m, "noop", "", host.Grant{}); got != "" {
		t.Errorf("noop = %q", got)
	}
	if got := mustCall(t, m, "config", "greeting", host.Grant{Config: map[string]string{"greeting": "hi"}}); got != "hi" {
		t.Errorf("config granted = %q, want hi", got)
	}
	if got := mustCall(t, m, "config", "greeting", host.Grant{}); got != "" {
		t.Errorf("config not granted = %q, want empty", got)
	}

	_, err := call(m, "fail", "", host.Grant{})
	ce := wantKind(t, err, host.ErrGuest)
	if ce.Guest == nil || ce.Guest.Message != "boom" || ce.Guest.Code != abi.CodeGuestError {
		t.Errorf("fail: guest error %+v, want plain-text boom", ce.Guest)
	}
	_, err = call(m, "fail_json", "", host.Grant{})
	ce = wantKind(t, err, host.ErrGuest)
	if d := cmp.Diff(&abi.Error{Code: abi.CodeInvalidInput, Message: "bad arg"}, ce.ABIError()); d != "" {
		t.Errorf("fail_json (-want +got)\n%s", d)
	}
	_, err = call(m, "rc7", "", host.Grant{})
	if ce = wantKind(t, err, host.ErrGuest); ce.ReturnCode != 7 {
		t.Errorf("rc7: return code %d", ce.ReturnCode)
	}
	if _, err := call(m, "no_such_export", "", host.Grant{}); !errors.Is(err, host.ErrExportNotFound) {
		t.Errorf("missing export: err = %v", err)
	}
	if _, err := call(m, "memory", "", host.Grant{}); !errors.Is(err, host.ErrExportNotFound) {
		t.Errorf("memory export called: err = %v", err)
	}
	if d := cmp.Diff([]string{"config", "echo", "fail", "fail_json", "log", "noop", "rc7", "vars"}, m.Exports()); d != "" {
		t.Errorf("Exports (-want +got)\n%s", d)
	}
}

func TestLogs(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/echo.wasm")
	var seen []host.LogEntry
	res, err := m.Call(context.Background(), "log", []byte("a message"), &host.CallOptions{OnLog: func(e host.LogEntry) { seen = append(seen, e) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []host.LogEntry{{Level: abi.LogInfo, Source: "log", Message: "a message"}}
	if d := cmp.Diff(want, res.Logs); d != "" {
		t.Errorf("Logs (-want +got)\n%s", d)
	}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("OnLog (-want +got)\n%s", d)
	}
	quiet := newHost(t, testConfig().WithLogLevel(abi.LogError))
	res, err = load(t, quiet, "wat/echo.wasm").Call(context.Background(), "log", []byte("dropped"), nil)
	if err != nil || len(res.Logs) != 0 {
		t.Errorf("below the log level: logs %v, err %v", res.Logs, err)
	}
}

// Each call gets a fresh instance: nothing a call writes reaches the next.
func TestFreshInstancePerCall(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/echo.wasm")
	for i := 0; i < 3; i++ {
		if got := mustCall(t, m, "vars", "", host.Grant{}); got != "1" {
			t.Fatalf("call %d: vars counter = %q, want 1 (state leaked between calls)", i, got)
		}
	}
}

func TestPoolKeepsStateAndDiscardsBroken(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/echo.wasm")
	p, err := m.NewPool(host.CallOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := 1; i <= 3; i++ {
		res, err := p.Call(context.Background(), "vars", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Output); got != fmt.Sprint(i) {
			t.Fatalf("pooled call %d: counter %q, want %d", i, got, i)
		}
	}
	// A guest error keeps the instance; the counter goes on.
	if _, err := p.Call(context.Background(), "fail", nil); !errors.Is(err, host.ErrGuest) {
		t.Fatal(err)
	}
	if res, _ := p.Call(context.Background(), "vars", nil); string(res.Output) != "4" {
		t.Errorf("after a guest error: counter %q, want 4", res.Output)
	}
	if _, err := m.NewPool(host.CallOptions{}, 0); !errors.Is(err, host.ErrBadConfig) {
		t.Errorf("pool of size 0: err = %v", err)
	}

	tm := load(t, h, "wat/trap.wasm")
	tp, _ := tm.NewPool(host.CallOptions{}, 2)
	defer tp.Close()
	for i := 0; i < 3; i++ {
		if _, err := tp.Call(context.Background(), "trap", nil); !errors.Is(err, host.ErrTrap) {
			t.Fatalf("pooled trap %d: err = %v", i, err)
		}
	}
	tp.Close()
	if _, err := tp.Call(context.Background(), "trap", nil); !errors.Is(err, host.ErrClosed) {
		t.Errorf("closed pool: err = %v", err)
	}
}

func TestTrapMidCall(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/trap.wasm")
	for _, export := range []string{"trap", "oob"} {
		res, err := call(m, export, "", host.Grant{})
		ce := wantKind(t, err, host.ErrTrap)
		if ce.Code != abi.CodeTrap || len(res.Output) != 0 {
			t.Errorf("%s: code %s, output %q (partial output must not be returned)", export, ce.Code, res.Output)
		}
	}
	_, err := call(load(t, h, "wat/recurse.wasm"), "recurse", "", host.Grant{})
	wantKind(t, err, host.ErrTrap)
	// The host keeps serving.
	if got := mustCall(t, load(t, h, "wat/echo.wasm"), "echo", "still here", host.Grant{}); got != "still here" {
		t.Errorf("after traps: %q", got)
	}
}

func TestMemoryLimit(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/membomb.wasm")
	g := host.Grant{Limits: host.Limits{MaxMemoryBytes: 1 << 20}}
	if got := mustCall(t, m, "grow", "", g); got != "16" {
		t.Errorf("grow under a 1 MiB cap reached %s pages, want 16", got)
	}
	_, err := call(m, "grow_trap", "", g)
	wantKind(t, err, host.ErrLimit)
	// A module whose initial memory is above the cap is refused per call.
	_, err = call(load(t, h, "wat/echo.wasm"), "echo", "", host.Grant{Limits: host.Limits{MaxMemoryBytes: 1024}})
	wantKind(t, err, host.ErrLimit)
}

func TestKernelOutputVarCaps(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/flood.wasm")
	g := host.Grant{Limits: host.Limits{MaxKernelBytes: 8 << 20, MaxOutputBytes: 1 << 20, MaxVarBytes: 1 << 20, MaxLogBytes: 64 << 10}}

	_, err := call(m, "output_flood", "", g) // 256 MiB alloc
	wantKind(t, err, host.ErrLimit)
	_, err = call(m, "output_flood", fmt.Sprint(2<<20), g) // fits the kernel, not the output cap
	if ce := wantKind(t, err, host.ErrLimit); !strings.Contains(ce.Message, "output") {
		t.Errorf("output cap message %q should name the output", ce.Message)
	}
	_, err = call(m, "kernel_bomb", "", g)
	wantKind(t, err, host.ErrLimit)
	_, err = call(m, "var_flood", "", g)
	if ce := wantKind(t, err, host.ErrLimit); !strings.Contains(ce.Message, "var") {
		t.Errorf("var cap message %q should name the var store", ce.Message)
	}

	// A log flood is not fatal: logs are cut at the cap and the call ends.
	res, err := call(m, "log_flood", "200", g)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range res.Logs {
		total += len(e.Message)
	}
	// Each entry also counts 64 bytes of the cap for what the host keeps
	// besides its message.
	if want := 64<<10 - 64*len(res.Logs); !res.LogsTruncated || total != want {
		t.Errorf("log flood: truncated=%v, kept %d bytes in %d entries, want the 64 KiB cap less 64 per entry (%d)", res.LogsTruncated, total, len(res.Logs), want)
	}
}

func TestTimeoutStopsSpinningGuest(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/loop.wasm")
	_, err := call(m, "spin", "", host.Grant{Limits: host.Limits{Timeout: 50 * time.Millisecond}})
	if ce := wantKind(t, err, host.ErrTimeout); ce.Code != abi.CodeTimeout {
		t.Errorf("code %s", ce.Code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err = m.Call(ctx, "spin", nil, nil)
	wantKind(t, err, host.ErrCanceled)
}

// A guest blocked in a host call (sleep, HTTP) is released at its deadline:
// the 60 s sleep and the never-answering server are cut at 100 ms.
func TestTimeoutInterruptsBlockingHostCalls(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/blocking.wasm")
	g := host.Grant{Limits: host.Limits{Timeout: 100 * time.Millisecond}}

	start := time.Now()
	_, err := call(m, "sleep", "60000", g)
	wantKind(t, err, host.ErrTimeout)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("sleep was not interrupted (returned after %v)", d)
	}
	if got := mustCall(t, m, "sleep", "1", host.Grant{}); got != "slept" {
		t.Errorf("short sleep = %q", got)
	}

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	g.AllowedHosts = []string{"127.0.0.1"}
	g.AllowPrivateNetwork = true
	start = time.Now()
	_, err = call(m, "http_block", fmt.Sprintf(`{"url":%q}`, srv.URL), g)
	wantKind(t, err, host.ErrTimeout)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("http request was not interrupted (returned after %v)", d)
	}
}

// More spinning guests than cores, with garbage collections forced while
// they spin: every spinner stops at its deadline and a good call still
// answers. Without an interrupt the first GC would wait forever.
//
// Metered, the calls run with the tick check (no fuel limit) and counting
// fuel (CountFuel): with the tick check the flag the spinners wait for is
// set by the kernel, with no goroutine needing a processor.
func TestSpinnersDoNotStallTheProcess(t *testing.T) {
	for _, tc := range []struct {
		name               string
		metered, countFuel bool
	}{{"tick", true, false}, {"fuel", true, true}, {"unmetered", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			testSpinners(t, testConfig().WithMetering(tc.metered).WithTickCheck(true), tc.countFuel, tc.metered && !tc.countFuel && tickLinux())
		})
	}
}

func testSpinners(t *testing.T, cfg host.Config, countFuel, tick bool) {
	h := newHost(t, cfg)
	spin := load(t, h, "wat/loop.wasm")
	gospin := load(t, h, "go/gohostile/gohostile.wasm")
	echo := load(t, h, "wat/echo.wasm")
	if !countFuel {
		host.WaitTickCheck(spin)
		host.WaitTickCheck(gospin)
		// A first call's instance runs the initialisers, counting fuel;
		// the spinners' start from its snapshot.
		var prime sync.WaitGroup
		for _, m := range []*host.Module{spin, gospin} {
			prime.Add(1)
			go func() {
				defer prime.Done()
				_, err := m.Call(t.Context(), "spin", nil, &host.CallOptions{Grant: host.Grant{Limits: host.Limits{Timeout: 500 * time.Millisecond}}})
				if !errors.Is(err, host.ErrTimeout) {
					t.Errorf("first spin: %v, want ErrTimeout", err)
				}
			}()
		}
		prime.Wait()
	}
	n := runtime.NumCPU() + 2
	g := host.Grant{Limits: host.Limits{Timeout: 300 * time.Millisecond}}

	var wg sync.WaitGroup
	errs := make([]error, n)
	counted := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := spin
			if i%2 == 1 {
				m = gospin // a Go integer loop
			}
			var res *host.Result
			res, errs[i] = m.Call(t.Context(), "spin", nil, &host.CallOptions{Grant: g, CountFuel: countFuel})
			counted[i] = res.FuelCounted
		}()
	}
	stop := make(chan struct{})
	gcDone := make(chan int)
	go func() {
		count := 0
		for {
			select {
			case <-stop:
				gcDone <- count
				return
			default:
				runtime.GC()
				count++
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	// A well-behaved call completes while the spinners run.
	good := make(chan error, 1)
	go func() {
		res, err := call(echo, "echo", "alive", host.Grant{})
		if err == nil && string(res.Output) != "alive" {
			err = fmt.Errorf("echo = %q", res.Output)
		}
		good <- err
	}()
	select {
	case err := <-good:
		if err != nil {
			t.Errorf("good call: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a good call did not answer while guests were spinning")
	}
	wg.Wait()
	close(stop)
	if gcs := <-gcDone; gcs == 0 {
		t.Error("no garbage collection completed while guests were spinning")
	}
	for i, err := range errs {
		if !errors.Is(err, host.ErrTimeout) {
			t.Errorf("spinner %d: err = %v, want ErrTimeout", i, err)
		}
		if tick && counted[i] {
			t.Errorf("spinner %d counted fuel: it did not run with the tick check", i)
		}
	}
}

type recordingDispatcher struct {
	mu    sync.Mutex
	calls []string
	depth []int
}

func (d *recordingDispatcher) CallTool(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
	d.mu.Lock()
	d.calls = append(d.calls, name+string(args))
	d.depth = append(d.depth, host.CallDepth(ctx))
	d.mu.Unlock()
	return abi.ToolResult{Output: json.RawMessage(`{"called":"` + name + `"}`)}
}

func TestToolCall(t *testing.T) {
	h := newHost(t, testConfig().WithMaxToolDepth(2))
	m := load(t, h, "wat/tool_call.wasm")
	d := &recordingDispatcher{}
	run := func(ctx context.Context, name string, g host.Grant, tools host.ToolDispatcher) abi.ToolResult {
		t.Helper()
		res, err := m.Call(ctx, "call_tool", []byte(name), &host.CallOptions{Grant: g, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		var r abi.ToolResult
		if err := json.Unmarshal(res.Output, &r); err != nil {
			t.Fatalf("tool_call result %q: %v", res.Output, err)
		}
		return r
	}
	allowed := host.Grant{Tools: []string{"slugify"}}
	r := run(context.Background(), "slugify", allowed, d)
	if r.IsError || string(r.Output) != `{"called":"slugify"}` {
		t.Errorf("allowed tool_call = %+v", r)
	}
	if d := cmp.Diff([]string{`slugify{"x":1}`}, d.calls); d != "" {
		t.Errorf("dispatched (-want +got)\n%s", d)
	}
	if d.depth[0] != 1 {
		t.Errorf("nested call depth %d, want 1", d.depth[0])
	}

	r = run(context.Background(), "rm_rf", allowed, d)
	if !r.IsError || r.Error.Code != abi.CodePermissionDenied {
		t.Errorf("tool outside the grant = %+v, want permission_denied", r)
	}
	if len(d.calls) != 1 {
		t.Errorf("a denied tool reached the dispatcher: %v", d.calls)
	}
	r = run(context.Background(), "slugify", allowed, nil)
	if !r.IsError || r.Error.Code != abi.CodeUnavailable {
		t.Errorf("no dispatcher = %+v, want unavailable", r)
	}
	// Nested calls: the dispatcher calls the module again, which calls a
	// tool again, until the depth limit (2) answers depth_exceeded.
	var depths []int
	var nest host.ToolDispatcherFunc
	nest = func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
		depths = append(depths, host.CallDepth(ctx))
		res, err := m.Call(ctx, "call_tool", []byte(name), &host.CallOptions{Grant: allowed, Tools: nest})
		if err != nil {
			return abi.ToolResult{IsError: true, Error: &abi.Error{Code: abi.CodeInternal, Message: err.Error()}}
		}
		return abi.ToolResult{Output: res.Output}
	}
	r = run(context.Background(), "slugify", allowed, nest)
	for r.Error == nil && len(r.Output) > 0 && r.Output[0] == '{' {
		var inner abi.ToolResult
		if err := json.Unmarshal(r.Output, &inner); err != nil || (inner.Output == nil && inner.Error == nil) {
			break
		}
		r = inner
	}
	if !r.IsError || r.Error.Code != abi.CodeDepthExceeded {
		t.Errorf("innermost result = %+v, want depth_exceeded", r)
	}
	if d := cmp.Diff([]int{1, 2}, depths); d != "" {
		t.Errorf("dispatch depths (-want +got)\n%s", d)
	}
}

func TestCapabilityCall(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/tool_call.wasm")
	var asked []string
	provider := host.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, id+string(args))
		if id == "mail.fail" {
			return nil, &abi.Error{Code: abi.CodeUnavailable, Message: "smtp down"}
		}
		return json.RawMessage(`{"sent":true}`), nil
	})
	run := func(id string, g host.Grant, p host.ServiceProvider) abi.ToolResult {
		t.Helper()
		res, err := m.Call(context.Background(), "call_cap", []byte(id), &host.CallOptions{Grant: g, Services: p})
		if err != nil {
			t.Fatal(err)
		}
		var r abi.ToolResult
		if err := json.Unmarshal(res.Output, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	g := host.Grant{Capabilities: []string{"mail.send", "mail.fail"}}
	if r := run("mail.send", g, provider); r.IsError || string(r.Output) != `{"sent":true}` {
		t.Errorf("granted capability = %+v", r)
	}
	if r := run("mail.send", host.Grant{}, provider); !r.IsError || r.Error.Code != abi.CodePermissionDenied {
		t.Errorf("ungranted capability = %+v", r)
	}
	if r := run("mail.fail", g, provider); !r.IsError || r.Error.Code != abi.CodeUnavailable || r.Error.Message != "smtp down" {
		t.Errorf("provider error = %+v", r)
	}
	if r := run("mail.send", g, nil); !r.IsError || r.Error.Code != abi.CodeUnavailable {
		t.Errorf("no provider = %+v", r)
	}
	if d := cmp.Diff([]string{`mail.send{"x":1}`, `mail.fail{"x":1}`}, asked); d != "" {
		t.Errorf("provider saw (-want +got)\n%s", d)
	}
}

func TestHTTPCapability(t *testing.T) {
	h := newHost(t, testConfig())
	m := load(t, h, "wat/blocking.wasm")
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "hello from the server")
	}))
	defer srv.Close()
	req := func(path string) string { return fmt.Sprintf(`{"url":%q}`, srv.URL+path) }

	allowed := host.Grant{AllowedHosts: []string{"127.0.0.1"}, AllowPrivateNetwork: true}
	if got := mustCall(t, m, "http_block", req("/"), allowed); got != "hello from the server" {
		t.Errorf("allowed request = %q", got)
	}
	for name, g := range map[string]host.Grant{
		"no grant":             {},
		"other host":           {AllowedHosts: []string{"example.com"}, AllowPrivateNetwork: true},
		"loopback not allowed": {AllowedHosts: []string{"*"}},
	} {
		before := hits
		_, err := call(m, "http_block", req("/"), g)
		var capErr *host.CapabilityError
		if !errors.Is(err, host.ErrDenied) || !errors.As(err, &capErr) || capErr.Capability != "network" {
			t.Errorf("%s: err = %v, want a network CapabilityError", name, err)
		}
		if hits != before {
			t.Errorf("%s: the server was reached", name)
		}
	}
	// A redirect from an allowed host to the metadata address is refused.
	_, err := call(m, "http_block", req("/redirect"), host.Grant{AllowedHosts: []string{"127.0.0.1", "169.254.169.254"}, AllowPrivateNetwork: false})
	wantKind(t, err, host.ErrDenied)
	_, err = call(m, "http_block", req("/redirect"), allowed)
	wantKind(t, err, host.ErrDenied)
	_, err = call(m, "http_block", `{"url":`, allowed)
	wantKind(t, err, host.ErrTrap)
}

func TestHostClosed(t *testing.T) {
	h, err := host.New(context.Background(), host.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	m := load(t, h, "wat/echo.wasm")
	h.Close(context.Background())
	if _, err := call(m, "echo", "x", host.Grant{}); !errors.Is(err, host.ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
	if _, err := h.Load(context.Background(), fixture(t, "wat/echo.wasm"), host.LoadOptions{}); !errors.Is(err, host.ErrClosed) {
		t.Errorf("load after Close: %v", err)
	}
}

func TestBadConfig(t *testing.T) {
	for name, cfg := range map[string]host.Config{
		"negative timeout": host.NewConfig().WithDefaultLimits(host.Limits{Timeout: -time.Second}),
		"huge memory":      host.NewConfig().WithDefaultLimits(host.Limits{MaxMemoryBytes: 8 << 30}),
		"negative depth":   host.NewConfig().WithMaxToolDepth(-1),
	} {
		if _, err := host.New(context.Background(), cfg); !errors.Is(err, host.ErrBadConfig) {
			t.Errorf("%s: err = %v, want ErrBadConfig", name, err)
		}
	}
}
