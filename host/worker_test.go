package host_test

import (
	"context"
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
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
)

// processConfig is the test configuration with calls in worker processes.
func processConfig(workers int) host.Config {
	return testConfig().WithIsolation(host.IsolationProcess).WithWorkers(workers)
}

func skipWithoutWorkers(t testing.TB) {
	t.Helper()
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		t.Skip("worker processes need a unix system")
	}
}

// isoCase is one call made under both isolations.
type isoCase struct {
	name, file, export, input string
	grant                     host.Grant
	tools                     host.ToolDispatcher
	services                  host.ServiceProvider
}

// Every call gives the same Result (but its timings) and the same error
// in a worker process as in-process.
func TestIsolationGivesSameResults(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, testConfig().WithWorkers(2))

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mounted notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	rw := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the server")
	}))
	defer srv.Close()

	tools := host.ToolDispatcherFunc(func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
		if name == "fails" {
			return abi.ToolResult{Error: &abi.Error{Code: abi.CodeNotFound, Message: "no such <thing>"}}
		}
		return abi.ToolResult{Output: json.RawMessage(fmt.Sprintf(`{"called":%q,"depth":%d,"args":%s}`, name, host.CallDepth(ctx), args))}
	})
	services := host.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		switch id {
		case "mail.fail":
			return nil, &abi.Error{Code: abi.CodeUnavailable, Message: "smtp down"}
		case "mail.plain":
			return nil, errors.New("plain failure")
		case "mail.nothing":
			return nil, nil
		}
		return json.RawMessage(`{"sent":true}`), nil
	})
	floodCaps := host.Grant{Limits: host.Limits{MaxKernelBytes: 8 << 20, MaxOutputBytes: 1 << 20, MaxVarBytes: 1 << 20, MaxLogBytes: 64 << 10}}
	short := host.Grant{Limits: host.Limits{Timeout: 100 * time.Millisecond}}
	caps := host.Grant{Capabilities: []string{"mail.send", "mail.fail", "mail.plain", "mail.nothing"}}
	text := `{"text":"Hello, Wörld! <b>&</b>"}`
	const textWasm = "../../packs/bundled/modules/text/text.wasm"

	cases := []isoCase{
		{name: "echo", file: "wat/echo.wasm", export: "echo", input: "héllo\x00"},
		{name: "noop", file: "wat/echo.wasm", export: "noop"},
		{name: "config", file: "wat/echo.wasm", export: "config", input: "greeting", grant: host.Grant{Config: map[string]string{"greeting": "hi"}}},
		{name: "config not granted", file: "wat/echo.wasm", export: "config", input: "greeting"},
		{name: "fail", file: "wat/echo.wasm", export: "fail"},
		{name: "fail_json", file: "wat/echo.wasm", export: "fail_json"},
		{name: "rc7", file: "wat/echo.wasm", export: "rc7"},
		{name: "log", file: "wat/echo.wasm", export: "log", input: "a message"},
		{name: "vars", file: "wat/echo.wasm", export: "vars"},
		{name: "missing export", file: "wat/echo.wasm", export: "no_such_export"},
		{name: "initial memory above cap", file: "wat/echo.wasm", export: "echo", grant: host.Grant{Limits: host.Limits{MaxMemoryBytes: 1024}}},
		{name: "trap", file: "wat/trap.wasm", export: "trap"},
		{name: "oob", file: "wat/trap.wasm", export: "oob"},
		{name: "grow", file: "wat/membomb.wasm", export: "grow", grant: host.Grant{Limits: host.Limits{MaxMemoryBytes: 1 << 20}}},
		{name: "grow_trap", file: "wat/membomb.wasm", export: "grow_trap", grant: host.Grant{Limits: host.Limits{MaxMemoryBytes: 1 << 20}}},
		{name: "output_flood", file: "wat/flood.wasm", export: "output_flood", grant: floodCaps},
		{name: "output over cap", file: "wat/flood.wasm", export: "output_flood", input: fmt.Sprint(2 << 20), grant: floodCaps},
		{name: "kernel_bomb", file: "wat/flood.wasm", export: "kernel_bomb", grant: floodCaps},
		{name: "var_flood", file: "wat/flood.wasm", export: "var_flood", grant: floodCaps},
		{name: "log_flood", file: "wat/flood.wasm", export: "log_flood", input: "3", grant: floodCaps},
		{name: "state", file: "wat/state.wasm", export: "bump"},
		{name: "fuel", file: "wat/loop_count.wasm", export: "count", input: "100000"},
		{name: "max_fuel", file: "wat/loop_count.wasm", export: "count", input: "100000", grant: host.Grant{Limits: host.Limits{MaxFuel: 1000}}},
		{name: "spin", file: "wat/loop.wasm", export: "spin", grant: short},
		{name: "sleep", file: "wat/blocking.wasm", export: "sleep", input: "1"},
		{name: "long sleep", file: "wat/blocking.wasm", export: "sleep", input: "60000", grant: short},
		{name: "http", file: "wat/blocking.wasm", export: "http_block", input: fmt.Sprintf(`{"url":%q}`, srv.URL),
			grant: host.Grant{AllowedHosts: []string{"127.0.0.1"}, AllowPrivateNetwork: true}},
		{name: "http denied", file: "wat/blocking.wasm", export: "http_block", input: fmt.Sprintf(`{"url":%q}`, srv.URL),
			grant: host.Grant{AllowedHosts: []string{"*"}}},
		{name: "http malformed", file: "wat/blocking.wasm", export: "http_block", input: `{"url":`},
		{name: "tool", file: "wat/tool_call.wasm", export: "call_tool", input: "slugify", grant: host.Grant{Tools: []string{"slugify"}}, tools: tools},
		{name: "tool error", file: "wat/tool_call.wasm", export: "call_tool", input: "fails", grant: host.Grant{Tools: []string{"*"}}, tools: tools},
		{name: "tool not granted", file: "wat/tool_call.wasm", export: "call_tool", input: "rm_rf", grant: host.Grant{Tools: []string{"slugify"}}, tools: tools},
		{name: "tool without dispatcher", file: "wat/tool_call.wasm", export: "call_tool", input: "slugify", grant: host.Grant{Tools: []string{"slugify"}}},
		{name: "capability", file: "wat/tool_call.wasm", export: "call_cap", input: "mail.send", grant: caps, services: services},
		{name: "capability error", file: "wat/tool_call.wasm", export: "call_cap", input: "mail.fail", grant: caps, services: services},
		{name: "capability plain error", file: "wat/tool_call.wasm", export: "call_cap", input: "mail.plain", grant: caps, services: services},
		{name: "capability no output", file: "wat/tool_call.wasm", export: "call_cap", input: "mail.nothing", grant: caps, services: services},
		{name: "capability not granted", file: "wat/tool_call.wasm", export: "call_cap", input: "mail.send", services: services},
		{name: "capability without provider", file: "wat/tool_call.wasm", export: "call_cap", input: "mail.send", grant: caps},
		{name: "env", file: "go/gocaps/gocaps.wasm", export: "getenv", input: "GREETING", grant: host.Grant{Env: map[string]string{"GREETING": "hi"}}},
		{name: "environ", file: "go/gocaps/gocaps.wasm", export: "environ", grant: host.Grant{Env: map[string]string{"A": "1"}}},
		{name: "mount read", file: "go/gocaps/gocaps.wasm", export: "read_file", input: "/data/notes.txt",
			grant: host.Grant{Mounts: []host.Mount{{HostPath: dir, GuestPath: "/data", ReadOnly: true}}}},
		{name: "mount read-only", file: "go/gocaps/gocaps.wasm", export: "write_file", input: "/data/new.txt",
			grant: host.Grant{Mounts: []host.Mount{{HostPath: dir, GuestPath: "/data", ReadOnly: true}}}},
		{name: "mount write", file: "go/gocaps/gocaps.wasm", export: "write_file", input: "/out/new.txt",
			grant: host.Grant{Mounts: []host.Mount{{HostPath: rw, GuestPath: "/out"}}}},
		{name: "no mount", file: "go/gocaps/gocaps.wasm", export: "read_file", input: "/data/notes.txt"},
		{name: "text slugify", file: textWasm, export: "slugify", input: text},
		{name: "text word_count", file: textWasm, export: "word_count", input: text},
		{name: "text bad input", file: textWasm, export: "slugify", input: `{"text":`},
	}
	mods := map[string]*host.Module{}
	for _, c := range cases {
		if mods[c.file] == nil {
			mods[c.file] = load(t, h, c.file)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(iso host.Isolation) (*host.Result, error) {
				g := c.grant
				g.Isolation = iso
				// Fuel counted, so that it can be compared.
				return mods[c.file].Call(context.Background(), c.export, []byte(c.input), &host.CallOptions{Grant: g, Tools: c.tools, Services: c.services, CountFuel: true})
			}
			wantRes, wantErr := run(host.IsolationInProcess)
			gotRes, gotErr := run(host.IsolationProcess)
			if strings.HasPrefix(c.file, "go/") || c.file == textWasm || c.grant.Limits.Timeout != 0 {
				// A Go guest's runtime does not run the same instructions
				// twice, nor does a guest stopped at a deadline: their
				// fuel is only compared with zero.
				if (wantRes.Fuel > 0) != (gotRes.Fuel > 0) {
					t.Errorf("Fuel: in-process %d, process %d", wantRes.Fuel, gotRes.Fuel)
				}
				wantRes.Fuel, gotRes.Fuel = 0, 0
			}
			compareCalls(t, wantRes, wantErr, gotRes, gotErr)
			if gotRes.Instantiate < 0 || gotRes.Execute < 0 || gotRes.Instantiate+gotRes.Execute > gotRes.Duration {
				t.Errorf("timings in a worker: instantiate %v + execute %v, duration %v", gotRes.Instantiate, gotRes.Execute, gotRes.Duration)
			}
		})
	}
	if data, err := os.ReadFile(filepath.Join(rw, "new.txt")); err != nil || string(data) != "written" {
		t.Errorf("file written through a worker's mount: %q, %v", data, err)
	}
}

// compareCalls fails the test unless two calls gave the same result (but
// its timings) and the same error.
func compareCalls(t *testing.T, wantRes *host.Result, wantErr error, gotRes *host.Result, gotErr error) {
	t.Helper()
	if wantRes == nil || gotRes == nil {
		t.Fatalf("nil result: in-process %v, process %v", wantRes, gotRes)
	}
	ignore := func(r host.Result) host.Result { r.Duration, r.Instantiate, r.Execute = 0, 0, 0; return r }
	if d := cmp.Diff(ignore(*wantRes), ignore(*gotRes)); d != "" {
		t.Errorf("Result (-in-process +process)\n%s", d)
	}
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("in-process err = %v, process err = %v", wantErr, gotErr)
	}
	if wantErr == nil {
		return
	}
	var wantCE, gotCE *host.CallError
	if errors.As(wantErr, &wantCE) != errors.As(gotErr, &gotCE) {
		t.Fatalf("in-process err = %#v, process err = %#v", wantErr, gotErr)
	}
	if wantCE == nil {
		for _, s := range []error{host.ErrExportNotFound, host.ErrClosed, host.ErrBadConfig} {
			if errors.Is(wantErr, s) != errors.Is(gotErr, s) {
				t.Errorf("in-process err = %v, process err = %v (matching %v)", wantErr, gotErr, s)
			}
		}
		return
	}
	if wantCE.Kind != gotCE.Kind {
		t.Errorf("Kind: in-process %v, process %v", wantCE.Kind, gotCE.Kind)
	}
	strip := func(ce host.CallError) host.CallError { ce.Kind, ce.Cause = nil, nil; return ce }
	if d := cmp.Diff(strip(*wantCE), strip(*gotCE)); d != "" {
		t.Errorf("CallError (-in-process +process)\n%s", d)
	}
	var wantCap, gotCap *host.CapabilityError
	if errors.As(wantErr, &wantCap) != errors.As(gotErr, &gotCap) || (wantCap != nil && *wantCap != *gotCap) {
		t.Errorf("CapabilityError: in-process %v, process %v", wantCap, gotCap)
	}
}

// The hostile set (hostile_test.go), every case at once in both modes,
// with good calls in worker processes beside it: each hostile call is
// contained with the same error as in-process, and the good calls answer.
func TestIsolationHostileSet(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, testConfig().WithWorkers(3))
	g := host.Grant{
		AllowedHosts: []string{"*"},
		Limits: host.Limits{
			Timeout: 500 * time.Millisecond, MaxMemoryBytes: 64 << 20, MaxKernelBytes: 16 << 20,
			MaxOutputBytes: 1 << 20, MaxVarBytes: 1 << 20, MaxLogBytes: hostileLogCap,
		},
	}
	mods := map[string]*host.Module{}
	for _, c := range hostileCases {
		if mods[c.file] == nil {
			mods[c.file] = load(t, h, c.file)
		}
	}
	good := load(t, h, "wat/echo.wasm")
	stop := make(chan struct{})
	goodDone := make(chan int)
	go func() {
		n := 0
		defer func() { goodDone <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			want := fmt.Sprintf("good call %d", n)
			res, err := call(good, "echo", want, host.Grant{Isolation: host.IsolationProcess})
			if err != nil || string(res.Output) != want {
				t.Errorf("good call beside the hostile set: %q, %v", res.Output, err)
				return
			}
			n++
		}
	}()
	var wg sync.WaitGroup
	for _, c := range hostileCases {
		for _, iso := range []host.Isolation{host.IsolationInProcess, host.IsolationProcess} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cg := g
				cg.Isolation = iso
				if c.kind != host.ErrTimeout {
					cg.Limits.Timeout = time.Minute // see testHostileSet
				}
				res, err := mods[c.file].Call(t.Context(), c.export, []byte(c.input), &host.CallOptions{Grant: cg})
				name := fmt.Sprintf("%s:%s (%s)", c.file, c.export, iso)
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
	if n := <-goodDone; n == 0 {
		t.Error("no good call completed while the hostile set ran")
	}
}

// OnLog entries reach the caller while the call runs, not at its end: a
// guest that logs past the cap and then keeps running has its entries
// delivered while it runs, so the caller can cancel it from OnLog (an
// entry held back to the end would come only at the 30s deadline, and the
// call would time out instead).
func TestIsolationStreamsLogs(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, processConfig(1))
	m := load(t, h, "wat/flood.wasm")
	mustCall(t, m, "log_flood", "1", host.Grant{}) // start the worker and load the module
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []host.LogEntry
	res, err := m.Call(ctx, "log_flood", []byte("100000000"), &host.CallOptions{
		Grant: host.Grant{Limits: host.Limits{Timeout: 30 * time.Second, MaxLogBytes: 256 << 10}},
		OnLog: func(e host.LogEntry) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, e)
			// Each entry is 64 KiB; the one the cap cuts short is the
			// last the call logs: cancel it there, so that it runs past
			// the cap (and is truncated) but not to its deadline.
			if len(e.Message) < 65536 {
				cancel()
			}
		},
	})
	wantKind(t, err, host.ErrCanceled)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no log entry reached OnLog")
	}
	if d := cmp.Diff(seen, res.Logs); d != "" {
		t.Errorf("OnLog entries differ from Result.Logs (-OnLog +Logs)\n%s", d)
	}
	if !res.LogsTruncated {
		t.Error("a log flood past the cap is not marked truncated")
	}
}

// A tool_call is served by the parent's dispatcher with the depth it has
// in-process, also when the dispatcher calls the module again, in another
// worker, with a single worker per depth.
func TestIsolationForwardsToolCalls(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, processConfig(1).WithMaxToolDepth(2))
	m := load(t, h, "wat/tool_call.wasm")
	allowed := host.Grant{Tools: []string{"slugify"}}
	var depths []int
	var pids [][]int
	var nest host.ToolDispatcherFunc
	nest = func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
		depths = append(depths, host.CallDepth(ctx))
		pids = append(pids, host.WorkerPIDs(h))
		res, err := m.Call(ctx, "call_tool", []byte(name), &host.CallOptions{Grant: allowed, Tools: nest})
		if err != nil {
			return abi.ToolResult{IsError: true, Error: &abi.Error{Code: abi.CodeInternal, Message: err.Error()}}
		}
		return abi.ToolResult{Output: res.Output}
	}
	res, err := m.Call(context.Background(), "call_tool", []byte("slugify"), &host.CallOptions{Grant: allowed, Tools: nest})
	if err != nil {
		t.Fatal(err)
	}
	var r abi.ToolResult
	if err := json.Unmarshal(res.Output, &r); err != nil {
		t.Fatal(err)
	}
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
	if len(pids) != 2 || len(pids[1]) < 2 {
		t.Errorf("nested calls ran in workers %v, want one more worker per depth", pids)
	}
}

// More concurrent calls than workers: each waits for a free worker, and
// no more workers start than configured.
func TestIsolationConcurrentCalls(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, processConfig(3))
	m := load(t, h, "wat/echo.wasm")
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				want := fmt.Sprintf("call %d.%d", i, j)
				res, err := m.Call(context.Background(), "echo", []byte(want), nil)
				if err != nil || string(res.Output) != want {
					t.Errorf("%s: %q, %v", want, res.Output, err)
				}
				var logged []host.LogEntry
				res, err = m.Call(context.Background(), "log", []byte(want), &host.CallOptions{OnLog: func(e host.LogEntry) { logged = append(logged, e) }})
				if err != nil || len(res.Logs) != 1 || res.Logs[0].Message != want || len(logged) != 1 {
					t.Errorf("log %s: %+v, %v", want, res.Logs, err)
				}
			}
		}()
	}
	wg.Wait()
	if n := host.WorkersStarted(h); n > 3 {
		t.Errorf("%d workers started for 3 slots", n)
	}
	// A call whose context ends while it waits for a worker gives up.
	spin := load(t, h, "wat/loop.wasm")
	var spinners sync.WaitGroup
	for range 3 {
		spinners.Add(1)
		go func() {
			defer spinners.Done()
			call(spin, "spin", "", host.Grant{Limits: host.Limits{Timeout: time.Second}})
		}()
	}
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := m.Call(ctx, "echo", nil, nil); err != nil && !errors.Is(err, host.ErrTimeout) {
		t.Errorf("waiting past the context: err = %v", err)
	}
	spinners.Wait()
}

// A worker that ignores its deadline (interruption failed) is killed at
// deadline + grace; the call ends with ErrTimeout and the next call runs
// in a new worker.
func TestIsolationKillsWorkerPastGrace(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, processConfig(1).WithWorkerGrace(300*time.Millisecond))
	host.WorkersIgnoreDeadlines(h)
	spin := load(t, h, "wat/loop.wasm")
	echo := load(t, h, "wat/echo.wasm")
	if got := mustCall(t, echo, "echo", "first", host.Grant{}); got != "first" {
		t.Fatalf("echo = %q", got)
	}
	first := host.WorkerPIDs(h)
	if len(first) != 1 {
		t.Fatalf("workers %v, want 1", first)
	}
	start := time.Now()
	res, err := call(spin, "spin", "", host.Grant{Limits: host.Limits{Timeout: 200 * time.Millisecond}})
	took := time.Since(start)
	ce := wantKind(t, err, host.ErrTimeout)
	if ce.Code != abi.CodeTimeout || ce.Message != "timed out after 200ms" || !strings.Contains(ce.Unwrap().Error(), "killed") {
		t.Errorf("error %+v (cause %v)", ce, ce.Unwrap())
	}
	if took < 500*time.Millisecond || took > 10*time.Second {
		t.Errorf("the spinning worker was stopped after %v, want deadline + grace = 500ms", took)
	}
	if res.Duration < 500*time.Millisecond {
		t.Errorf("Duration %v", res.Duration)
	}
	if alive(first[0]) {
		t.Errorf("killed worker %d is still there (or a zombie)", first[0])
	}
	if got := mustCall(t, echo, "echo", "again", host.Grant{}); got != "again" {
		t.Fatalf("echo after the kill = %q", got)
	}
	if now := host.WorkerPIDs(h); len(now) != 1 || now[0] == first[0] {
		t.Errorf("workers after the kill %v, want one new one (old %v)", now, first)
	}
	// A canceled call in such a worker is killed a grace after the cancel.
	ctx, cancel := context.WithCancel(context.Background())
	start = time.Now()
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = spin.Call(ctx, "spin", nil, nil)
	wantKind(t, err, host.ErrCanceled)
	if took := time.Since(start); took < 400*time.Millisecond || took > 10*time.Second {
		t.Errorf("canceled spinning worker stopped after %v, want cancel + grace = 400ms", took)
	}
}

// alive reports whether process pid exists, reaped or not.
func alive(pid int) bool {
	if runtime.GOOS == "linux" {
		// A zombie keeps its /proc entry until it is reaped.
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err == nil
	}
	return syscall.Kill(pid, 0) == nil
}

// A worker that dies during a call fails it with ErrTrap naming the
// cause; the next call gets a new worker.
func TestIsolationWorkerDiesMidCall(t *testing.T) {
	skipWithoutWorkers(t)
	h := newHost(t, processConfig(1))
	m := load(t, h, "wat/blocking.wasm")
	if got := mustCall(t, m, "sleep", "1", host.Grant{}); got != "slept" {
		t.Fatal(got)
	}
	pids := host.WorkerPIDs(h)
	time.AfterFunc(200*time.Millisecond, func() { syscall.Kill(pids[0], syscall.SIGKILL) })
	_, err := call(m, "sleep", "60000", host.Grant{Limits: host.Limits{Timeout: 30 * time.Second}})
	ce := wantKind(t, err, host.ErrTrap)
	if ce.Code != abi.CodeInternal || !strings.Contains(ce.Message, "worker process") || !strings.Contains(ce.Message, "killed") {
		t.Errorf("error %+v", ce)
	}
	if alive(pids[0]) {
		t.Errorf("dead worker %d was not reaped", pids[0])
	}
	if got := mustCall(t, m, "sleep", "1", host.Grant{}); got != "slept" {
		t.Errorf("after the crash: %q", got)
	}
}

// Close ends the calls in flight, kills every worker and reaps it, and
// leaves no goroutine of the supervisor behind.
func TestIsolationCloseWithCallsInFlight(t *testing.T) {
	skipWithoutWorkers(t)
	h, err := host.New(context.Background(), processConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	spin := load(t, h, "wat/loop.wasm")
	tc := load(t, h, "wat/tool_call.wasm")
	// One call waits in its tool dispatcher, two spin in their workers,
	// one waits for a worker, when Close comes.
	blocked := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Add(1)
	firstEnded := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(firstEnded)
		_, errs[0] = tc.Call(context.Background(), "call_tool", []byte("wait"), &host.CallOptions{
			Grant: host.Grant{Tools: []string{"wait"}},
			Tools: host.ToolDispatcherFunc(func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
				once.Do(func() { close(blocked) })
				<-ctx.Done()
				return abi.ToolResult{Error: &abi.Error{Code: abi.CodeTimeout, Message: "gone"}}
			}),
		})
	}()
	select {
	case <-blocked:
	case <-firstEnded:
		h.Close(context.Background())
		t.Fatalf("the call ended before its tool ran: %v", errs[0])
	case <-time.After(30 * time.Second):
		h.Close(context.Background())
		t.Fatal("the call's tool did not run")
	}
	for i := 1; i < len(errs); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = call(spin, "spin", "", host.Grant{Limits: host.Limits{Timeout: time.Minute}})
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); len(host.WorkerPIDs(h)) < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	pids := host.WorkerPIDs(h)
	if len(pids) != 3 {
		t.Fatalf("workers %v, want 3", pids)
	}
	start := time.Now()
	h.Close(context.Background())
	wg.Wait()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("calls in flight ended %v after Close", took)
	}
	for i, err := range errs {
		if !errors.Is(err, host.ErrClosed) {
			t.Errorf("call %d in flight at Close: err = %v, want ErrClosed", i, err)
		}
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("worker %d survived Close (or was not reaped)", pid)
		}
	}
	if _, err := call(spin, "spin", "", host.Grant{}); !errors.Is(err, host.ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
	leaked := func(g string) bool {
		return strings.Contains(g, "host.(*worker") || strings.Contains(g, "host.(*supervisor") || strings.Contains(g, "os/exec.")
	}
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		left = left[:0]
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if leaked(g) {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, g := range left {
		t.Errorf("goroutine left after Close:\n%s", g)
	}
}

// A program that does not serve as a worker fails its calls with a clear
// error, and the host backs off instead of starting it again and again.
func TestIsolationBrokenWorkerBinary(t *testing.T) {
	skipWithoutWorkers(t)
	truePath := "/bin/true"
	if _, err := os.Stat(truePath); err != nil {
		t.Skip("no /bin/true")
	}
	h := newHost(t, processConfig(2).WithWorkerCommand(truePath))
	m := load(t, h, "wat/echo.wasm")
	_, err := call(m, "echo", "x", host.Grant{})
	ce := wantKind(t, err, host.ErrTrap)
	if ce.Code != abi.CodeInternal || !strings.Contains(ce.Message, "ServeWorkerIfChild") {
		t.Errorf("error %+v", ce)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	calls := 0
	for ctx.Err() == nil {
		m.Call(ctx, "echo", nil, nil)
		calls++
	}
	if n := host.WorkersStarted(h); n > 10 {
		t.Errorf("%d workers started in a second (%d calls) of a program that exits at once; want a back-off", n, calls)
	}

	missing := newHost(t, processConfig(1).WithWorkerCommand(filepath.Join(t.TempDir(), "no-such-program")))
	_, err = call(load(t, missing, "wat/echo.wasm"), "echo", "x", host.Grant{})
	wantKind(t, err, host.ErrBadConfig)
}

// A worker that breaks the protocol (a frame too large, a field out of
// range, a tool the grant does not name, an unknown frame) is killed and
// its call fails with ErrTrap; the parent never holds more than the bytes
// it has received.
func TestIsolationHostileWorker(t *testing.T) {
	skipWithoutWorkers(t)
	for _, mode := range []string{"huge-frame", "stalled-frame", "bad-log", "log-flood", "tool-not-granted", "big-output", "bad-kind", "unknown-frame", "exit"} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(host.HostileWorkerEnv, mode)
			h := newHost(t, processConfig(1).WithWorkerGrace(100*time.Millisecond))
			m := load(t, h, "wat/tool_call.wasm")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := m.Call(context.Background(), "call_tool", []byte("slugify"), &host.CallOptions{
				Grant: host.Grant{Tools: []string{"slugify"}, Limits: host.Limits{Timeout: time.Second, MaxOutputBytes: 1 << 20, MaxLogBytes: 1 << 20}},
				Tools: host.ToolDispatcherFunc(func(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
					t.Errorf("dispatcher reached with %q", name)
					return abi.ToolResult{}
				}),
			})
			runtime.ReadMemStats(&after)
			want := host.ErrTrap
			if mode == "stalled-frame" {
				want = host.ErrTimeout
			}
			ce := wantKind(t, err, want)
			if want == host.ErrTrap && ce.Code != abi.CodeInternal {
				t.Errorf("code %s", ce.Code)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Errorf("the parent allocated %d MiB for a hostile worker", grew>>20)
			}
			if pids := host.WorkerPIDs(h); len(pids) != 0 {
				t.Errorf("hostile worker still running: %v", pids)
			}
		})
	}
}

func TestIsolationConfig(t *testing.T) {
	for name, cfg := range map[string]host.Config{
		"unknown isolation": host.NewConfig().WithIsolation("vm"),
		"negative workers":  host.NewConfig().WithWorkers(-1),
		"negative grace":    host.NewConfig().WithWorkerGrace(-time.Second),
	} {
		if _, err := host.New(context.Background(), cfg); !errors.Is(err, host.ErrBadConfig) {
			t.Errorf("%s: err = %v, want ErrBadConfig", name, err)
		}
	}
	h := newHost(t, testConfig())
	_, err := call(load(t, h, "wat/echo.wasm"), "echo", "x", host.Grant{Isolation: "vm"})
	wantKind(t, err, host.ErrBadConfig)
	// The host default applies to grants that leave Isolation empty; an
	// in-process grant overrides it.
	ph := newHost(t, processConfig(1))
	m := load(t, ph, "wat/echo.wasm")
	mustCall(t, m, "echo", "x", host.Grant{Isolation: host.IsolationInProcess})
	if n := host.WorkersStarted(ph); n != 0 {
		t.Errorf("an in-process grant started %d workers", n)
	}
	mustCall(t, m, "echo", "x", host.Grant{})
	if n := host.WorkersStarted(ph); n != 1 {
		t.Errorf("a grant under a process default started %d workers, want 1", n)
	}
}
