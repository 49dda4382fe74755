package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// Secrets the operations tests put where a careless log would copy them.
const (
	opsArgSecret = "sk_live_ARGUMENT_SECRET_4242"
	opsKeySecret = "sk_live_KEY_AS_SECRET_1717"
	opsEnvSecret = "ENV_VALUE_SECRET_9191"
	opsKey       = "sk_test_ops_tenant_000111222"
)

// opsPack is a pack of one Wasm tool (echo.wat's echo) that asks for a
// host, an env variable, a mount and a service, so that its grant has
// something of each to audit.
const opsPack = `name: opspack
version: 1.0.0
modules:
  - name: m
    path: m.wasm
    request:
      allowed_hosts: ["api.example.com"]
      env: [API_TOKEN]
      mounts:
        - {guest: /data, read_only: true}
      services: [mail.send]
    tools:
      - name: ops_echo
        export: echo
        description: DESCRIPTION
        input_schema:
          type: object
          properties:
            text: {type: string}
            n: {type: number}
            tags: {type: array, items: {type: string}}
            nested:
              type: object
              properties:
                token: {type: string}
`

// opsFixture is an engine over opsPack and two native tools (one that
// fails, one that waits at a gate), served by a server.
type opsFixture struct {
	e       *skillhost.Engine
	srv     *server.Server
	dir     string
	packDir string
	gate    chan struct{} // ops_wait returns when it is closed, by openGate
	started chan struct{} // ops_wait sends when it starts

	gateOnce sync.Once
}

// openGate lets every ops_wait return; it may be called more than once,
// so that a test can defer it for its Fatal paths.
func (f *opsFixture) openGate() { f.gateOnce.Do(func() { close(f.gate) }) }

// callResult is how a call made in another goroutine ended.
type callResult struct {
	res any // *mcp.CallToolResult or *skillhost.Result
	err error
}

// waitStarted waits until ops_wait has started. A call that ends first,
// having failed before the tool ran, fails the test with its error.
func (f *opsFixture) waitStarted(t testing.TB, ended <-chan callResult) {
	t.Helper()
	select {
	case <-f.started:
	case r := <-ended:
		t.Fatalf("a call ended before ops_wait started: %+v, %v", r.res, r.err)
	case <-time.After(30 * time.Second):
		t.Fatal("ops_wait did not start within 30s")
	}
}

// waitFor receives from ch, and fails the test if nothing comes within d.
func waitFor[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("waited %s for %s", d, what)
	}
	var zero T
	return zero
}

type opsFixtureOptions struct {
	toml   string
	opts   server.Options
	noWarm bool
	nest   bool // add the pack of again, which calls itself
}

// opsNestPack is tool_call.wat's again: it calls the tool named again,
// itself, until the depth limit stops it.
const opsNestPack = `name: opsnest
version: 1.0.0
modules:
  - name: m
    path: m.wasm
    request:
      tools: [again]
    tools:
      - name: again
        description: Call itself.
`

func newOpsFixture(t testing.TB, fo opsFixtureOptions) *opsFixture {
	t.Helper()
	f := &opsFixture{dir: t.TempDir(), gate: make(chan struct{}), started: make(chan struct{}, 64)}
	f.packDir = filepath.Join(f.dir, "packs", "opspack")
	if err := os.MkdirAll(f.packDir, 0o755); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.packDir, "m.wasm"), wasm, 0o644)
	f.writeManifest(t, "Echo the arguments back.")
	grants := map[string]skillhost.Grant{"opspack": {
		AllowedHosts: []string{"api.example.com"}, Env: map[string]string{"API_TOKEN": opsEnvSecret},
		Mounts:       []skillhost.Mount{{HostPath: f.dir, GuestPath: "/data", ReadOnly: true}},
		Capabilities: []string{"mail.send"},
	}}
	if fo.nest {
		nest := filepath.Join(f.dir, "packs", "opsnest")
		os.MkdirAll(nest, 0o755)
		wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "tool_call.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(nest, "m.wasm"), wasm, 0o644)
		os.WriteFile(filepath.Join(nest, "pack.yaml"), []byte(opsNestPack), 0o644)
		grants["opsnest"] = skillhost.Grant{Tools: []string{"again"}}
	}
	cfg, err := packs.ParseConfig(filepath.Join(f.dir, "skillhost.toml"), []byte(fo.toml))
	if err != nil {
		t.Fatal(err)
	}
	type failIn struct {
		Password string `json:"password"`
	}
	fail, err := registry.Func("ops_fail", func(ctx context.Context, in failIn) (string, error) {
		return "", &registry.ToolError{Code: "invalid_input", Message: "always fails"}
	}, &registry.FuncOptions{Description: "Fail on purpose."})
	if err != nil {
		t.Fatal(err)
	}
	type waitIn struct{}
	wait, err := registry.Func("ops_wait", func(ctx context.Context, _ waitIn) (string, error) {
		f.started <- struct{}{}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-f.gate:
			return "released", nil
		}
	}, &registry.FuncOptions{Description: "Wait until the test lets go."})
	if err != nil {
		t.Fatal(err)
	}
	hub := server.NewEventHub(nil)
	f.e, err = skillhost.Open(context.Background(), skillhost.Config{
		StateDir: testenv.StateDir(), IndexPath: filepath.Join(f.dir, "index.db"), NoBundled: true, NoUserSources: true,
		PackDirs: []string{filepath.Join(f.dir, "packs")}, Tools: []skillhost.Native{fail, wait}, Events: hub,
		Grants: grants,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.e.Close(context.Background()) })
	if p := f.e.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	opts := fo.opts
	opts.Config, opts.Events, opts.Version = serveconf.Of(cfg), hub, "test"
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	f.srv, err = server.New(f.e, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.srv.Close() })
	if !fo.noWarm {
		if _, err := f.srv.Warm(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *opsFixture) writeManifest(t testing.TB, description string) {
	t.Helper()
	m := strings.Replace(opsPack, "DESCRIPTION", description, 1)
	if err := os.WriteFile(filepath.Join(f.packDir, "pack.yaml"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serve starts an httptest server of the server's handler.
func (f *opsFixture) serve(t testing.TB) *httptest.Server {
	ts := httptest.NewServer(f.srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// opsClient connects an MCP client to ts with key ("" for none), in a
// session of the 2025-11-25 revision.
func opsClient(t testing.TB, ts *httptest.Server, key string) *mcp.ClientSession {
	return opsClientVersion(t, ts, key, "2025-11-25")
}

func opsClientVersion(t testing.TB, ts *httptest.Server, key, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "ops-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + server.MCPPath, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: opsKeyTransport(key)}}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type opsKeyTransport string

func (k opsKeyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if k != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+string(k))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func opsCall(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

func get(t testing.TB, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestArgShape(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "n": map[string]any{}, "list": map[string]any{"items": map[string]any{
			"properties": map[string]any{"k": map[string]any{}}}},
		"deep": map[string]any{"properties": map[string]any{"a": map[string]any{"properties": map[string]any{"b": map[string]any{}}}}},
	}}
	deep := `{"a":{"a":{"a":{"a":{"a":{"a":{"a":1}}}}}}}`
	tests := []struct {
		name, args string
		schema     map[string]any
		want       string
	}{
		{"scalars", `{"text":"hi","n":3.5}`, schema, `{"n":"number","text":"string"}`},
		{"undeclared keys are counted", `{"text":"x","sk_live_zz":1,"other":true}`, schema, `{"*":"2 keys","text":"string"}`},
		{"no schema names no key", `{"a":1}`, nil, `{"*":"1 key"}`},
		{"array of objects", `{"list":[{"k":"v"},{"k":"w"},{"k":2}]}`, schema, `{"list":[{"k":"string"},{"k":"number"}]}`},
		{"array of mixed", `[1,"a",null,true,{},[],1.5,"b"]`, nil, `["number","string","null","boolean","2 more shapes"]`},
		{"empty array", `{"list":[]}`, schema, `{"list":[]}`},
		{"depth is bounded", deep, map[string]any{}, `{"*":"1 key"}`},
		{"nested declared", `{"deep":{"a":{"b":"s","c":"t"}}}`, schema, `{"deep":{"a":{"*":"1 key","b":"string"}}}`},
		{"not JSON", `{"text":`, schema, `"invalid"`},
		{"top-level scalar", `"a secret"`, schema, `"string"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(server.ArgShape(json.RawMessage(tt.args), tt.schema))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Depth: a schema that declares every level still stops at six.
	level := map[string]any{}
	s := level
	for range 10 {
		next := map[string]any{}
		s["properties"] = map[string]any{"a": next}
		s = next
	}
	if got := string(server.ArgShape(json.RawMessage(deep), level)); !strings.Contains(got, `"…"`) {
		t.Errorf("a seven-level object is not cut at six: %s", got)
	}
}

// readAudit reads the audit log's records.
func readAudit(t *testing.T, path string) []server.AuditRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []server.AuditRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r server.AuditRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.jsonl")
	f := newOpsFixture(t, opsFixtureOptions{toml: "[server]\naudit_log = \"" + logPath + "\"\n"})
	ts := f.serve(t)
	cs := opsClient(t, ts, "")
	res := opsCall(t, cs, "ops_echo", map[string]any{"text": opsArgSecret, "n": 7, "tags": []string{opsArgSecret},
		"nested": map[string]any{"token": opsArgSecret}, opsKeySecret: "x"})
	if res.IsError {
		t.Fatalf("ops_echo: %+v", res.Content[0])
	}
	if res := opsCall(t, cs, "ops_fail", map[string]any{"password": opsArgSecret}); !res.IsError {
		t.Fatal("ops_fail did not fail")
	}
	opsCall(t, opsClientVersion(t, ts, "", "2026-07-28"), "ops_echo", map[string]any{})

	data, _ := os.ReadFile(logPath)
	for _, secret := range []string{opsArgSecret, opsKeySecret, opsEnvSecret} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the audit log holds the secret %q:\n%s", secret, data)
		}
	}
	recs := readAudit(t, logPath)
	if len(recs) != 3 {
		t.Fatalf("%d audit records, want 3:\n%s", len(recs), data)
	}
	echo, fail := recs[0], recs[1]
	if recs[2].Session != "" || recs[2].Tool != "ops_echo" || string(recs[2].Args) != "{}" {
		t.Errorf("a stateless request's call: %+v, want no session", recs[2])
	}
	if echo.Session == "" || echo.Session != fail.Session {
		t.Errorf("sessions %q and %q: want the one MCP session's id on both", echo.Session, fail.Session)
	}
	if time.Since(echo.Time) > time.Minute || echo.Time.Location() != time.UTC {
		t.Errorf("time %v: want now, in UTC", echo.Time)
	}
	if echo.DurationMS <= 0 {
		t.Errorf("duration_ms %v", echo.DurationMS)
	}
	echo.Time, fail.Time, echo.Session, fail.Session, echo.DurationMS, fail.DurationMS, echo.Fuel = time.Time{}, time.Time{}, "", "", 0, 0, nil
	want := []server.AuditRecord{{
		Tenant: server.LocalTenant, Tool: "ops_echo", Kind: "wasm", Outcome: "ok",
		Args: json.RawMessage(`{"*":"1 key","n":"number","nested":{"token":"string"},"tags":["string"],"text":"string"}`),
		Grants: &server.AuditGrants{Hosts: []string{"api.example.com"}, Mounts: []string{"/data=" + f.dir + ":ro"},
			Services: []string{"mail.send"}, Env: []string{"API_TOKEN"}, Isolation: "in-process"},
	}, {
		Tenant: server.LocalTenant, Tool: "ops_fail", Kind: "native", Outcome: "error", Code: "invalid_input",
		Args: json.RawMessage(`{"password":"string"}`),
	}}
	if diff := cmp.Diff(want, []server.AuditRecord{echo, fail}); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}

// TestAuditLogConcurrent hammers the log from many runs at once: every
// call has its line, whole.
func TestAuditLogConcurrent(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	f := newOpsFixture(t, opsFixtureOptions{toml: "[server]\naudit_log = \"" + logPath + "\"\n"})
	const workers, calls = 8, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := f.e.NewRun(skillhost.RunContext{Tenant: server.LocalTenant, Session: "s" + string(rune('a'+w))}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			for range calls {
				if _, err := run.Call(context.Background(), "ops_echo", json.RawMessage(`{"text":"`+strings.Repeat("x", 2000)+`"}`), nil); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if recs := readAudit(t, logPath); len(recs) != workers*calls {
		t.Errorf("%d records, want %d", len(recs), workers*calls)
	}
}

func TestAuditLogStdoutAndOff(t *testing.T) {
	var out syncBuffer
	f := newOpsFixture(t, opsFixtureOptions{toml: "[server]\naudit_log = \"-\"\n", opts: server.Options{Stdout: &out}})
	if _, err := f.e.Call(context.Background(), "ops_echo", json.RawMessage(`{"text":"a"}`), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"tool":"ops_echo"`) {
		t.Errorf("audit_log = \"-\" wrote %q to standard output", out.String())
	}

	off := newOpsFixture(t, opsFixtureOptions{})
	off.e.Call(context.Background(), "ops_echo", json.RawMessage(`{}`), nil)
	// Nothing to read: the test is that no file appears in the working
	// folder and nothing fails.
	if _, err := os.Stat("audit.jsonl"); err == nil {
		t.Error("an audit log was written with audit_log unset")
	}

	_, err := server.New(f.e, &server.Options{Config: serveconf.Of(mustParse(t, "[server]\naudit_log = \""+filepath.Join(t.TempDir(), "no", "such", "dir", "a.log")+"\"\n"))})
	if err == nil || !strings.Contains(err.Error(), "audit_log") {
		t.Errorf("an audit log that cannot be opened: %v, want an error naming audit_log", err)
	}
}

func mustParse(t *testing.T, toml string) *packs.Config {
	t.Helper()
	cfg, err := packs.ParseConfig(filepath.Join(t.TempDir(), "skillhost.toml"), []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMetricsLocal(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{})
	ts := f.serve(t)
	cs := opsClient(t, ts, "")
	opsCall(t, cs, "ops_echo", map[string]any{"text": "a"})
	opsCall(t, cs, "ops_echo", map[string]any{"text": "b"})
	opsCall(t, cs, "ops_fail", map[string]any{})
	opsCall(t, cs, "tool_search", map[string]any{"query": "echo"})
	code, body := get(t, ts.URL+server.MetricsPath, "")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`skillhost_tool_calls_total{kind="wasm",outcome="ok",tenant="local"} 2`,
		`skillhost_tool_calls_total{kind="native",outcome="error",tenant="local"} 1`,
		`skillhost_tool_errors_total{code="invalid_input",tenant="local"} 1`,
		`skillhost_tool_call_duration_seconds_count{kind="wasm",tenant="local"} 2`,
		`skillhost_instance_seconds_count{tenant="local"} 2`,
		`skillhost_search_duration_seconds_count{tenant="local",tool="tool_search"} 1`,
		`skillhost_modules_compiled 1`,
		`skillhost_module_compile_seconds_count 1`,
		`skillhost_calls_in_flight{tenant="local"} `, // 0, or 1 while the last request's handler returns
		`skillhost_ready 1`,
		`skillhost_memory_budget_bytes 1.073741824e+09`, // the default
		`skillhost_memory_evictions_total 0`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The echo module's snapshot and idle instance are held.
	if _, v, _ := strings.Cut(body, "\nskillhost_held_memory_bytes "); v == "" || strings.HasPrefix(v, "0\n") {
		t.Errorf("/metrics: held memory is not reported or is 0 after two Wasm calls")
	}
	// The Host check guards /metrics as it guards /mcp.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+server.MetricsPath, nil)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics for Host evil.example: %d, want 403", resp.StatusCode)
	}
}

// TestMetricsTenants: with tenants, /metrics needs the operator's token
// (a tenant's key is not one), counts quota refusals per tenant, and only
// configured tenant ids are label values.
func TestMetricsTenants(t *testing.T) {
	toml := `
[tenants.alpha]
api_keys = ["` + serveconf.HashKey(opsKey) + `"]
quotas = {calls_per_minute = 1}
`
	const token = "metrics-token-for-the-operator"
	f := newOpsFixture(t, opsFixtureOptions{toml: toml, opts: server.Options{MetricsToken: token}})
	ts := f.serve(t)
	cs := opsClient(t, ts, opsKey)
	opsCall(t, cs, "ops_echo", map[string]any{"text": "a"})
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops_echo", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a second call within the minute was not refused")
	}
	// A client's made-up strings reach no label.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+server.MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"client_label_x"}}`))
	req.Header.Set("Authorization", "Bearer client_label_y")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}

	if code, _ := get(t, ts.URL+server.MetricsPath, ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	if code, _ := get(t, ts.URL+server.MetricsPath, opsKey); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a tenant's key: %d, want 401", code)
	}
	code, body := get(t, ts.URL+server.MetricsPath, token)
	if code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d %s", code, body)
	}
	for _, want := range []string{
		`skillhost_quota_refusals_total{quota="calls",tenant="alpha"} 1`,
		`skillhost_tool_calls_total{kind="wasm",outcome="ok",tenant="alpha"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if i := strings.Index(line, `tenant="`); i >= 0 {
			v := line[i+len(`tenant="`):]
			v = v[:strings.IndexByte(v, '"')]
			if v != "alpha" && v != "-" {
				t.Errorf("tenant label %q is not a configured tenant: %s", v, line)
			}
		}
		if strings.Contains(line, "client_label") {
			t.Errorf("a client's string reached the metrics: %s", line)
		}
	}

	// Without a token a server with tenants serves no metrics at all.
	f2 := newOpsFixture(t, opsFixtureOptions{toml: toml})
	ts2 := f2.serve(t)
	if code, _ := get(t, ts2.URL+server.MetricsPath, opsKey); code != http.StatusNotFound {
		t.Errorf("/metrics with tenants and no token configured: %d, want 404", code)
	}
}

func TestTraces(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	f := newOpsFixture(t, opsFixtureOptions{opts: server.Options{TracerProvider: tp}})
	ts := f.serve(t)
	cs := opsClient(t, ts, "")
	sr.Reset()
	opsCall(t, cs, "ops_echo", map[string]any{"text": "a"})

	// The request's span ends when its handler returns, which may be
	// just after the client has its answer.
	var spans []sdktrace.ReadOnlySpan
	var call, parent sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		spans = sr.Ended()
		call, parent = nil, nil
		for _, s := range spans {
			if s.Name() == "tool_call ops_echo" {
				call = s
			}
		}
		for _, s := range spans {
			if call != nil && s.SpanContext().SpanID() == call.Parent().SpanID() {
				parent = s
			}
		}
		if parent != nil {
			break
		}
	}
	if call == nil {
		t.Fatalf("no tool_call span among %d", len(spans))
	}
	if parent == nil || parent.Name() != "mcp.request POST" {
		t.Errorf("the call's parent is %v, want the HTTP request's span", call.Parent())
	}
	var phases []string
	for _, s := range spans {
		if s.Parent().SpanID() == call.SpanContext().SpanID() {
			phases = append(phases, s.Name())
			if s.StartTime().Before(call.StartTime()) || s.EndTime().After(call.EndTime()) {
				t.Errorf("phase %s [%v, %v] lies outside its call [%v, %v]", s.Name(), s.StartTime(), s.EndTime(), call.StartTime(), call.EndTime())
			}
		}
	}
	if diff := cmp.Diff([]string{"validation", "instance", "guest"}, phases); diff != "" {
		t.Errorf("phases under the call (-want +got):\n%s", diff)
	}
	attrs := map[string]string{}
	for _, a := range call.Attributes() {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["skillhost.tenant"] != "local" || attrs["skillhost.outcome"] != "ok" || attrs["skillhost.kind"] != "wasm" {
		t.Errorf("call attributes %v", attrs)
	}
}

func TestReadyOnlyAfterWarm(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{noWarm: true})
	ts := f.serve(t)
	if code, _ := get(t, ts.URL+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before Warm: %d, want 503", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.srv.Warm(ctx, nil); !errors.Is(err, server.ErrNotReady) {
		t.Errorf("Warm with a done context: %v, want ErrNotReady", err)
	}
	if code, _ := get(t, ts.URL+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after a cut-short Warm: %d, want 503", code)
	}
	var shown []string
	rep, err := f.srv.Warm(context.Background(), func(name string, size int) func() {
		shown = append(shown, name)
		if size <= 0 {
			t.Errorf("module %s of size %d", name, size)
		}
		return func() {}
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Modules != 1 || len(rep.Failed) != 0 || !cmp.Equal(shown, []string{"opspack/m.wasm"}) {
		t.Errorf("Warm: %+v, progress shown for %v", rep, shown)
	}
	if code, _ := get(t, ts.URL+"/readyz", ""); code != http.StatusOK {
		t.Errorf("/readyz after Warm: %d, want 200", code)
	}
	if err := f.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.srv.Warm(context.Background(), nil)
	if code, _ := get(t, ts.URL+"/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after Shutdown and a late Warm: %d, want 503", code)
	}
}

// TestDrain: Shutdown lets a call in flight finish and refuses the calls
// that come after it began.
func TestDrain(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{})
	defer f.openGate() // on every path: no call is left waiting
	ts := f.serve(t)
	cs := opsClient(t, ts, "")
	late := opsClient(t, ts, "")
	done := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops_wait", Arguments: map[string]any{}})
		done <- callResult{res, err}
	}()
	f.waitStarted(t, done)
	shut := make(chan error, 1)
	go func() { shut <- f.srv.Shutdown(context.Background()) }()
	// Shutdown cannot return while the call runs; wait until it is
	// draining by watching /readyz.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if code, _ := get(t, ts.URL+"/readyz", ""); code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not turn 503 within 30s of Shutdown")
		}
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a call in flight", err)
	default:
	}
	if _, err := late.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops_echo", Arguments: map[string]any{}}); err == nil {
		t.Error("a call made while draining was taken")
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+server.MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ops_echo"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a call while draining: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	f.openGate()
	r := waitFor(t, done, 30*time.Second, "the call in flight to finish")
	if res, _ := r.res.(*mcp.CallToolResult); r.err != nil || res == nil || res.IsError {
		t.Fatalf("the call in flight did not finish well: %+v, %v", r.res, r.err)
	}
	if err := waitFor(t, shut, 30*time.Second, "Shutdown to return"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestDrainDeadline: Shutdown gives up when its context ends first.
func TestDrainDeadline(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{})
	defer f.openGate() // on every path: no call is left waiting
	ended := make(chan callResult, 2)
	go func() {
		res, err := f.e.Call(context.Background(), "ops_wait", json.RawMessage(`{}`), nil)
		ended <- callResult{res, err}
	}()
	ts := f.serve(t)
	cs := opsClient(t, ts, "")
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops_wait", Arguments: map[string]any{}})
		ended <- callResult{res, err}
	}()
	f.waitStarted(t, ended)
	f.waitStarted(t, ended)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := f.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown past its deadline: %v, want DeadlineExceeded", err)
	}
	f.openGate()
}

// TestReloadUnderLoad drives calls through the HTTP handler from several
// clients while the packs are reloaded again and again, some reloads
// with a changed manifest: no call fails.
func TestReloadUnderLoad(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{})
	ts := f.serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	var calls, failures atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		cs := opsClient(t, ts, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops_echo", Arguments: map[string]any{"text": "x"}})
				calls.Add(1)
				if err != nil || res.IsError {
					failures.Add(1)
					t.Errorf("a call failed during reloads: %v %+v", err, res)
				}
			}
		}()
	}
	for i := range 6 {
		if i%2 == 1 {
			f.writeManifest(t, "Echo the arguments back, version "+string(rune('a'+i))+".")
		}
		if err := f.srv.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
	if calls.Load() == 0 || failures.Load() != 0 {
		t.Errorf("%d calls, %d failed", calls.Load(), failures.Load())
	}
	if tool, _ := f.e.Tool("ops_echo"); tool == nil || !strings.HasSuffix(tool.Description, "version f.") {
		t.Errorf("the last reload did not take: %+v", tool)
	}
	_, body := get(t, ts.URL+server.MetricsPath, "")
	if !strings.Contains(body, `skillhost_reloads_total{result="ok"} 6`) {
		t.Error("/metrics does not count the six reloads")
	}
}

// TestWatchPacks: a changed pack file is reloaded without a signal.
func TestWatchPacks(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.WatchPacks(ctx, 10*time.Millisecond)
	manifest := filepath.Join(f.packDir, "pack.yaml")
	f.writeManifest(t, "Echo, as changed on disk.")
	// The watcher's first look may come after the write, which it then
	// takes as the files' state: touch the manifest now and then, each
	// time with a later modification time, until the change is seen.
	// Nothing but the watcher reloads the packs.
	mtime := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for i := 1; time.Now().Before(deadline); i++ {
		if tool, _ := f.e.Tool("ops_echo"); tool != nil && tool.Description == "Echo, as changed on disk." {
			return
		}
		if i%50 == 0 { // every 500 ms
			mtime = mtime.Add(time.Second)
			if err := os.Chtimes(manifest, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the changed manifest was not reloaded")
}

// TestAuditTenantGrant: a tenant whose section narrows a pack's grant is
// audited with the narrowed grant, and the section's env value is not
// written either.
func TestAuditTenantGrant(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	toml := `
[server]
audit_log = "` + logPath + `"

[tenants.alpha]
api_keys = ["` + serveconf.HashKey(opsKey) + `"]

[tenants.alpha.grants.opspack]
allowed_hosts = []
services = ["mail.send"]
env = {API_TOKEN = "TENANT_SECTION_SECRET"}
`
	f := newOpsFixture(t, opsFixtureOptions{toml: toml})
	cs := opsClient(t, f.serve(t), opsKey)
	opsCall(t, cs, "ops_echo", map[string]any{"text": opsArgSecret})
	data, _ := os.ReadFile(logPath)
	for _, secret := range []string{opsArgSecret, opsEnvSecret, "TENANT_SECTION_SECRET"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the audit log holds the secret %q:\n%s", secret, data)
		}
	}
	recs := readAudit(t, logPath)
	if len(recs) != 1 {
		t.Fatalf("%d records:\n%s", len(recs), data)
	}
	want := &server.AuditGrants{Services: []string{"mail.send"}, Env: []string{"API_TOKEN"}, Isolation: "in-process"}
	if diff := cmp.Diff(want, recs[0].Grants); diff != "" || recs[0].Tenant != "alpha" {
		t.Errorf("tenant %q, grants (-want +got):\n%s", recs[0].Tenant, diff)
	}
}

// TestNestedCalls: a guest's tool_call is audited at its depth and traced
// under the client's call.
func TestNestedCalls(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	f := newOpsFixture(t, opsFixtureOptions{nest: true, toml: "[server]\naudit_log = \"" + logPath + "\"\n",
		opts: server.Options{TracerProvider: tp}})
	cs := opsClient(t, f.serve(t), "")
	opsCall(t, cs, "again", map[string]any{})
	recs := readAudit(t, logPath)
	if len(recs) < 3 {
		t.Fatalf("%d audit records for a call that nests itself, want one per depth", len(recs))
	}
	// Inner calls end first.
	for i, r := range recs {
		if want := len(recs) - 1 - i; r.Depth != want || r.Tool != "again" {
			t.Errorf("record %d: %s at depth %d, want again at %d", i, r.Tool, r.Depth, want)
		}
		if r.Grants == nil || !cmp.Equal(r.Grants.Tools, []string{"again"}) {
			t.Errorf("record %d: grants %+v, want tools [again]", i, r.Grants)
		}
	}
	var root sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(10 * time.Second); root == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, s := range sr.Ended() {
			if s.Name() == "tool_call again" && s.Parent().IsValid() && !hasAttr(s, "skillhost.depth") {
				root = s
			}
		}
	}
	if root == nil {
		t.Fatal("no span of the client's call")
	}
	nested := 0
	for _, s := range sr.Ended() {
		if s.Name() == "tool_call again" && hasAttr(s, "skillhost.depth") {
			nested++
			if s.Parent().SpanID() != root.SpanContext().SpanID() {
				t.Errorf("a nested call's span is not under the client's call")
			}
		}
	}
	if nested != len(recs)-1 {
		t.Errorf("%d nested call spans, want %d", nested, len(recs)-1)
	}
}

func hasAttr(s sdktrace.ReadOnlySpan, key string) bool {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return true
		}
	}
	return false
}

func TestTracerProviderOffByDefault(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tp, err := server.NewTracerProvider(context.Background(), "", "test")
	if err != nil || tp != nil {
		t.Fatalf("without an endpoint: %v, %v; want no provider", tp, err)
	}
	for _, env := range []string{"", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		endpoint := "http://127.0.0.1:4318"
		if env != "" {
			t.Setenv(env, endpoint)
			endpoint = ""
		}
		tp, err := server.NewTracerProvider(context.Background(), endpoint, "test")
		if err != nil || tp == nil {
			t.Fatalf("with an endpoint (%s): %v, %v", env, tp, err)
		}
		tp.Shutdown(context.Background())
	}
}

// TestDrainStdio: on standard input a call in flight finishes too, and a
// call made while draining is a tool error with code unavailable.
func TestDrainStdio(t *testing.T) {
	f := newOpsFixture(t, opsFixtureOptions{})
	defer f.openGate() // on every path: no call is left waiting
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- f.srv.ServeStdio(ctx, inR, outW) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "ops-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ops_wait", Arguments: map[string]any{}})
		done <- callResult{res, err}
	}()
	f.waitStarted(t, done)
	shut := make(chan error, 1)
	go func() { shut <- f.srv.Shutdown(context.Background()) }()
	var late *mcp.CallToolResult
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		// The first call may come before Shutdown has begun.
		if late, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ops_echo", Arguments: map[string]any{}}); err != nil || late.IsError {
			break
		}
	}
	if err != nil || late == nil || !late.IsError || !strings.HasPrefix(late.Content[0].(*mcp.TextContent).Text, "unavailable:") {
		t.Errorf("a call while draining: %+v, %v; want a tool error with code unavailable", late, err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a call in flight", err)
	default:
	}
	f.openGate()
	r := waitFor(t, done, 30*time.Second, "the call in flight to finish")
	if res, _ := r.res.(*mcp.CallToolResult); r.err != nil || res == nil || res.IsError {
		t.Errorf("the call in flight did not finish well: %+v, %v", r.res, r.err)
	}
	if err := waitFor(t, shut, 30*time.Second, "Shutdown to return"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	cs.Close()
	inW.Close()
	cancel()
	waitFor(t, served, 30*time.Second, "ServeStdio to return")
}
