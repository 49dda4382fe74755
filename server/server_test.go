package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// Protocol revisions the tests speak.
const (
	stateful  = "2025-11-25"
	stateless = "2026-07-28"
)

// keyA and keyB are the API keys of the tenants of twoTenants.
const (
	keyA = "sk_test_tenant_a_0123456789"
	keyB = "sk_test_tenant_b_9876543210"
)

// twoTenants gives tenant a the bundled core pack and tenant b the secret
// pack; nothing is shared.
var twoTenants = `
[server]
shared_packs = []

[tenants.a]
api_keys = ["` + serveconf.HashKey(keyA) + `"]
packs = ["core"]

[tenants.b]
api_keys = ["` + serveconf.HashKey(keyB) + `"]
packs = ["secret"]
activation_scope = "session"
`

// secretPack is tenant b's pack: one tool, loaded on demand.
const secretPack = `name: secret
version: 1.0.0
default_loading: deferred
modules:
  - name: m
    path: m.wasm
    tools:
      - name: secret_echo
        export: echo
        description: Echo the arguments back, for tenant b only.
        input_schema:
          type: object
          properties:
            text: {type: string}
  - name: spin
    path: spin.wasm
    limits:
      timeout: 200ms
    tools:
      - name: secret_spin
        export: spin
        description: Spin until stopped at the deadline; a hostile guest.
`

// quiet drops the server's log records.
var quiet = slog.New(slog.DiscardHandler)

// fixtureMetricsToken is the token of a fixture's /metrics.
const fixtureMetricsToken = "fixture-metrics-token"

type fixture struct {
	e   *skillhost.Engine
	srv *server.Server
	url string
	// The fixture's slow_wait is a native tool that waits until its
	// context ends, a send on release or its seconds pass. A wait of more
	// than zero seconds says on slowStarted that it has begun.
	release     chan struct{}
	slowStarted chan struct{}
}

// newFixture opens an engine over the bundled pack and the secret pack
// and serves it over an httptest server with the tenants of toml.
func newFixture(t testing.TB, toml string) *fixture {
	t.Helper()
	return newFixtureAt(t, func(string) string { return toml })
}

// newFixtureAt is newFixture for a config that names the server's own
// URL (scheme://host:port), which it is given once the server listens.
func newFixtureAt(t testing.TB, toml func(base string) string) *fixture {
	t.Helper()
	var handler atomic.Pointer[http.Handler]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	dir := t.TempDir()
	packDir := filepath.Join(dir, "secret")
	os.MkdirAll(packDir, 0o755)
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(packDir, "m.wasm"), wasm, 0o644)
	spin, err := os.ReadFile(filepath.Join("..", "testdata", "guests", "wat", "loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(packDir, "spin.wasm"), spin, 0o644)
	os.WriteFile(filepath.Join(packDir, "pack.yaml"), []byte(secretPack), 0o644)
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(toml(ts.URL)))
	if err != nil {
		t.Fatal(err)
	}
	type wait struct {
		Seconds int `json:"seconds" description:"how long to wait"`
	}
	release, slowStarted := make(chan struct{}), make(chan struct{}, 1)
	slow, err := registry.Func("slow_wait", func(ctx context.Context, in wait) (string, error) {
		if in.Seconds > 0 {
			select {
			case slowStarted <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-release:
			return "released", nil
		case <-time.After(time.Duration(in.Seconds) * time.Second):
			return "waited", nil
		}
	}, &registry.FuncOptions{Description: "Wait a while, then answer."})
	if err != nil {
		t.Fatal(err)
	}
	hub := server.NewEventHub(nil)
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: testenv.StateDir(), IndexPath: filepath.Join(dir, "index.db"),
		NoUserSources: true, PackDirs: []string{packDir}, Tools: []skillhost.Native{slow}, Events: hub, Operator: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	srv, err := server.New(e, &server.Options{Config: serveconf.Of(cfg), Events: hub, Version: "test", Logger: quiet, MetricsToken: fixtureMetricsToken})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	handler.Store(&h)
	return &fixture{e: e, srv: srv, url: ts.URL + server.MCPPath, release: release, slowStarted: slowStarted}
}

// keyTransport adds a bearer key to every request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.key != "" {
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a client session to f with key, speaking version.
func (f *fixture) connect(t testing.TB, key, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: keyTransport{key}}, MaxRetries: -1}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustConnect(t testing.TB, f *fixture, key, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := f.connect(t, key, version, opts)
	if err != nil {
		t.Fatalf("connecting (%s): %v", version, err)
	}
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Both revisions list the run's visible catalog in name order, call a
// tool, show a tool error as isError and an unknown tool as a protocol
// error; a deferred tool is called by name after tool_search finds it.
func TestToolsBothRevisions(t *testing.T) {
	f := newFixture(t, twoTenants)
	for _, version := range []string{stateful, stateless} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			cs := mustConnect(t, f, keyA, version, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			names := toolNames(t, cs)
			if !slices.IsSorted(names) || !slices.Contains(names, "tool_search") {
				t.Errorf("tools/list = %v, want sorted names with tool_search", names)
			}
			if slices.Contains(names, "secret_echo") {
				t.Errorf("tenant a lists tenant b's tool: %v", names)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "Hello, World!"}})
			if err != nil || res.IsError || !strings.Contains(text(res), "hello-world") {
				t.Fatalf("slugify: %+v, %v", res, err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": 5}})
			if err != nil || !res.IsError || !strings.Contains(text(res), "invalid_input") || !strings.Contains(text(res), "text") {
				t.Errorf("slugify with a number: %+v, %v; want an isError result naming the field", res, err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), `unknown tool "no_such_tool"`) {
				t.Errorf("unknown tool: %v", err)
			}
		})
	}
}

// In a session, calling a deferred tool activates it: the client is told
// the list changed, and the next tools/list shows it. Another session of
// the same tenant does not see it.
func TestActivationNotifiesSession(t *testing.T) {
	f := newFixture(t, twoTenants)
	changed := make(chan struct{}, 4)
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}
	cs := mustConnect(t, f, keyB, stateful, opts)
	if names := toolNames(t, cs); slices.Contains(names, "secret_echo") {
		t.Fatalf("a deferred tool is listed before activation: %v", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("secret_echo: %+v, %v", res, err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after an activation")
	}
	if names := toolNames(t, cs); !slices.Contains(names, "secret_echo") {
		t.Errorf("tools/list after activation = %v", names)
	}
	other := mustConnect(t, f, keyB, stateful, nil)
	if names := toolNames(t, other); slices.Contains(names, "secret_echo") {
		t.Errorf("another session sees the activation: %v", names)
	}
}

// A tenant never lists, finds or calls another tenant's tools, and a
// forbidden tool gets exactly the error of a missing one.
func TestTenantsDoNotSeeEachOther(t *testing.T) {
	f := newFixture(t, twoTenants)
	ctx := context.Background()
	for _, version := range []string{stateful, stateless} {
		a := mustConnect(t, f, keyA, version, nil)
		b := mustConnect(t, f, keyB, version, nil)
		_, errForbidden := a.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "x"}})
		_, errMissing := a.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echx", Arguments: map[string]any{"text": "x"}})
		if errForbidden == nil || errMissing == nil ||
			strings.ReplaceAll(errForbidden.Error(), "secret_echo", "NAME") != strings.ReplaceAll(errMissing.Error(), "secret_echx", "NAME") {
			t.Errorf("%s: forbidden %v vs missing %v: the errors differ", version, errForbidden, errMissing)
		}
		if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err == nil {
			t.Errorf("%s: tenant b called tenant a's slugify", version)
		}
		for _, q := range []string{`{"query":"secret echo"}`, `{"query":".*","search_type":"regex","limit":20}`} {
			res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "tool_search", Arguments: json.RawMessage(q)})
			if err != nil || res.IsError || strings.Contains(text(res), "secret_echo") {
				t.Errorf("%s: tenant a's tool_search %s: %v %s", version, q, err, text(res))
			}
			res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "tool_search", Arguments: json.RawMessage(q)})
			if err != nil || res.IsError || strings.Contains(text(res), "slugify") {
				t.Errorf("%s: tenant b's tool_search %s: %v %s", version, q, err, text(res))
			}
		}
	}
}

// No key, or a key of no tenant, is 401 with a WWW-Authenticate header;
// a Host the server is not reached by is 403.
func TestAuthAndHost(t *testing.T) {
	f := newFixture(t, twoTenants)
	for _, key := range []string{"", "sk_wrong"} {
		if _, err := f.connect(t, key, stateful, nil); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Errorf("key %q: %v, want 401", key, err)
		}
		req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("key %q: %d %v", key, resp.StatusCode, resp.Header)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{}`))
	req.Host = "attacker.example"
	req.Header.Set("Authorization", "Bearer "+keyA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "allowed_hosts") {
		t.Errorf("foreign Host: %d %s", resp.StatusCode, body)
	}
}

// Over its calls-per-minute quota a tenant gets 429 with Retry-After;
// the other tenant is not affected. A concurrent-calls quota refuses the
// call beyond it while the others run.
func TestQuotas(t *testing.T) {
	f := newFixture(t, twoTenants+`
[tenants.a.quotas]
calls_per_minute = 2

[tenants.b.quotas]
concurrent_calls = 1
`)
	ctx := context.Background()
	a := mustConnect(t, f, keyA, stateless, nil)
	for i := range 2 {
		if res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
			t.Fatalf("call %d within quota: %+v, %v", i, res, err)
		}
	}
	_, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("third call in a minute: %v, want 429", err)
	}
	// The raw answer: 429 and Retry-After.
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slugify","arguments":{"text":"x"}}}`))
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), `"id":7`) {
		t.Errorf("over quota: %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	b := mustConnect(t, f, keyB, stateless, nil)
	first := make(chan error, 1)
	go func() {
		res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "slow_wait", Arguments: map[string]any{"seconds": 30}})
		if err == nil && res.IsError {
			err = errors.New(text(res))
		}
		first <- err
	}()
	select {
	case <-f.slowStarted:
	case err := <-first:
		t.Fatalf("the first call ended before the second began: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the first call did not start")
	}
	_, second := b.CallTool(ctx, &mcp.CallToolParams{Name: "slow_wait", Arguments: map[string]any{"seconds": 0}})
	if second == nil || !strings.Contains(second.Error(), "Too Many Requests") {
		t.Errorf("a second concurrent call: %v, want 429", second)
	}
	select {
	case f.release <- struct{}{}:
	case err := <-first:
		t.Fatalf("the first call ended before it was released: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the first call was not there to be released")
	}
	select {
	case err := <-first:
		if err != nil {
			t.Errorf("the first call: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first call did not end once released")
	}
}

// A server without tenants refuses a non-loopback address; with tenants
// it needs allowed hosts.
func TestCheckListen(t *testing.T) {
	local := newFixture(t, "")
	if err := local.srv.CheckListen("127.0.0.1:8787"); err != nil {
		t.Errorf("loopback: %v", err)
	}
	if err := local.srv.CheckListen("0.0.0.0:8787"); !errors.Is(err, server.ErrUnsafeListen) || !strings.Contains(err.Error(), "api_keys") {
		t.Errorf("public without tenants: %v", err)
	}
	withTenants := newFixture(t, twoTenants)
	if err := withTenants.srv.CheckListen("0.0.0.0:8787"); !errors.Is(err, server.ErrUnsafeListen) || !strings.Contains(err.Error(), "allowed_hosts") {
		t.Errorf("public without allowed_hosts: %v", err)
	}
	if _, err := server.New(withTenants.e, &server.Options{Config: mustConfig(t, twoTenants+"\n[tenants.c]\napi_keys = [\""+serveconf.HashKey("k")+"\"]\npacks = [\"core\"]\n")}); !errors.Is(err, server.ErrBadTenants) {
		t.Errorf("a pack of two tenants: %v", err)
	}
}

func mustConfig(t *testing.T, toml string) *serveconf.Config {
	t.Helper()
	cfg, err := packs.ParseConfig("skillhost.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	return serveconf.Of(cfg)
}

// Over standard input and output, one session serves the local tenant.
func TestStdio(t *testing.T) {
	f := newFixture(t, "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.ServeStdio(ctx, inR, outW) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "Über Straße"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "uber-strasse") {
		t.Errorf("slugify over stdio: %+v, %v", res, err)
	}
	if names := toolNames(t, cs); !slices.Contains(names, "secret_echo") && !slices.Contains(names, "tool_search") {
		t.Errorf("tools/list over stdio: %v", names)
	}
	cs.Close()
	inW.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("ServeStdio did not return after the client left")
	}
}

// The multi-tenant example of the docs is a valid configuration the
// server accepts.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "examples", "multi-tenant.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := packs.ParseConfig("multi-tenant.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	sc := serveconf.Of(cfg)
	if sc.Server.AuditLog != "/var/log/skillhost/audit.jsonl" {
		t.Errorf("audit_log = %q", sc.Server.AuditLog)
	}
	sc.Server.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl") // this machine has no /var/log/skillhost
	if len(sc.Tenants) != 2 || sc.Tenants[0].Quotas.ConcurrentCalls != 8 || sc.Tenants[1].Quotas.CallsPerMinute != 120 ||
		len(sc.Tenants[0].Grants["web-tools"].AllowedHosts) != 2 || sc.Server.DrainTimeout != 20*time.Second {
		t.Errorf("parsed %+v", sc)
	}
	e, err := skillhost.Open(context.Background(), skillhost.Config{StateDir: testenv.StateDir(), IndexPath: filepath.Join(t.TempDir(), "index.db"),
		NoUserSources: true, Operator: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	srv, err := server.New(e, &server.Options{Config: sc, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.CheckListen("0.0.0.0:8443"); err != nil {
		t.Errorf("the example cannot listen publicly: %v", err)
	}
}

// A tenant whose guests spin to their deadline at its concurrency quota
// does not stop another tenant's calls from being served.
func TestHostileTenantDoesNotStallAnother(t *testing.T) {
	f := newFixture(t, twoTenants+`
[tenants.b.quotas]
concurrent_calls = 2
`)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // on every path
	var spins atomic.Int64
	for range 4 {
		b := mustConnect(t, f, keyB, stateless, nil) // in the test's goroutine: it may Fatal
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "secret_spin"})
				switch {
				case err == nil && res.IsError && strings.Contains(text(res), "timeout"):
					spins.Add(1)
				case err != nil:
					// Refused at the quota (429): retry, but without
					// burning the CPU the guests and tenant a share.
					select {
					case <-ctx.Done():
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		}()
	}
	a := mustConnect(t, f, keyA, stateless, nil)
	for i := range 20 {
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := a.CallTool(cctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "Hostile Neighbours"}})
		ccancel()
		if err != nil || res.IsError || !strings.Contains(text(res), "hostile-neighbours") {
			t.Fatalf("tenant a's call %d beside a spinning tenant: %+v, %v", i, res, err)
		}
	}
	// Tenant a's calls may all be done before any spin reaches its 200 ms
	// deadline; the test shows something only once one has.
	for deadline := time.Now().Add(30 * time.Second); spins.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if spins.Load() == 0 {
		t.Error("tenant b's guests never spun to their deadline: the test shows nothing")
	}
}
