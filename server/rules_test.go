package server_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/server"
)

// Tenancy and quota rules, each with the test that fails when the rule is
// taken out.

// isUnknown reports whether err is the protocol error of a tool the
// caller cannot reach.
func isUnknown(err error, name string) bool {
	return err != nil && strings.Contains(err.Error(), `unknown tool "`+name+`"`)
}

// A tenant's deny_tools hide a tool from tools/list and tool_search and
// refuse its calls as unknown; the tenant's other tools still work.
func TestDenyTools(t *testing.T) {
	f := newFixture(t, strings.Replace(twoTenants, `packs = ["core"]`, `packs = ["core"]
deny_tools = ["slug*"]`, 1))
	ctx := context.Background()
	for _, version := range []string{stateful, stateless} {
		a := mustConnect(t, f, keyA, version, nil)
		if names := toolNames(t, a); slices.Contains(names, "slugify") || !slices.Contains(names, "tool_search") {
			t.Errorf("%s: tools/list with slugify denied: %v", version, names)
		}
		if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); !isUnknown(err, "slugify") {
			t.Errorf("%s: a call of a denied tool: %v, want unknown tool", version, err)
		}
		out, _ := callText(t, a, "tool_search", map[string]any{"query": "slug", "search_type": "regex"})
		if strings.Contains(out, `"slugify"`) {
			t.Errorf("%s: tool_search finds a denied tool: %.300s", version, out)
		}
		if out, isErr := callText(t, a, "tool_search", map[string]any{"query": "slugify", "search_type": "exact"}); isErr || strings.Contains(out, `"name":"slugify"`) {
			t.Errorf("%s: tool_search exact finds a denied tool: %.300s", version, out)
		}
	}
	// The other tenant, without deny_tools, has no slugify either (it is
	// a's pack), and a's own other tools are there: the control.
	b := mustConnect(t, f, keyB, stateless, nil)
	if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "slugify"}); !isUnknown(err, "slugify") {
		t.Errorf("b's call of a's tool: %v", err)
	}
}

// Without [server] shared_packs, the packs a tenant owns stay its own:
// only the packs no tenant names are everyone's.
func TestOwnPacksPrivateWithoutSharedPacks(t *testing.T) {
	toml := strings.Replace(twoTenants, "[server]\nshared_packs = []\n", "", 1)
	if strings.Contains(toml, "shared_packs") {
		t.Fatal("the fixture still sets shared_packs")
	}
	f := newFixture(t, toml)
	ctx := context.Background()
	a := mustConnect(t, f, keyA, stateless, nil)
	b := mustConnect(t, f, keyB, stateless, nil)
	if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "x"}}); !isUnknown(err, "secret_echo") {
		t.Errorf("a's call of b's pack's tool: %v, want unknown tool", err)
	}
	if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); !isUnknown(err, "slugify") {
		t.Errorf("b's call of a's pack's tool: %v, want unknown tool", err)
	}
	if res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "secret_echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Errorf("b's call of its own tool: %+v, %v", res, err)
	}
	if names := toolNames(t, a); slices.Contains(names, "secret_echo") {
		t.Errorf("a lists b's tool: %v", names)
	}
}

// stdioClient serves tenant of f's engine on standard input with toml's
// quotas and connects a client to it.
func stdioClient(t *testing.T, f *fixture, toml, tenant string) *mcp.ClientSession {
	t.Helper()
	srv, err := server.New(f.e, &server.Options{Config: mustConfig(t, toml), StdioTenant: tenant, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("ServeStdio did not end")
		}
	})
	return cs
}

// limitText reports whether a result is a quota's refusal of the named
// quota.
func limitText(res *mcp.CallToolResult, quota string) bool {
	return res != nil && res.IsError && strings.Contains(text(res), "limit_exceeded") && strings.Contains(text(res), quota)
}

// On standard input, calls are admitted into the tenant's quotas one by
// one: calls per minute and concurrent calls refuse as a tool error.
func TestStdioQuotas(t *testing.T) {
	f := newFixture(t, twoTenants)
	ctx := context.Background()
	cs := stdioClient(t, f, twoTenants+"[tenants.a.quotas]\ncalls_per_minute = 2\n", "a")
	for i := range 2 {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
			t.Fatalf("call %d within the quota: %+v %v", i, res, err)
		}
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err != nil || !limitText(res, "calls") {
		t.Errorf("a third call in a minute on standard input: %+v %v, want limit_exceeded", res, err)
	}

	cs = stdioClient(t, f, twoTenants+"[tenants.a.quotas]\nconcurrent_calls = 1\n", "a")
	first := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_wait", Arguments: map[string]any{"seconds": 60}})
		first <- err
	}()
	select {
	case <-f.slowStarted:
	case <-time.After(30 * time.Second):
		t.Fatal("the first call did not start")
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "x"}}); err != nil || !limitText(res, "concurrent calls") {
		t.Errorf("a second concurrent call on standard input: %+v %v, want limit_exceeded", res, err)
	}
	select {
	case f.release <- struct{}{}:
	case <-time.After(30 * time.Second):
		t.Fatal("the first call was not there to be released")
	}
	if err := <-first; err != nil {
		t.Errorf("the first call: %v", err)
	}
}

// echoHeaders and echoBody are a stateless call of secret_echo.
var echoHeaders, echoBody = rawStatelessCall(1, "secret_echo")

// The guest-memory quota refuses a Wasm call whose memory limit does not
// fit beside the calls in flight, and one that does not fit at all; a
// native tool holds no guest memory.
func TestMemoryQuota(t *testing.T) {
	f := newFixture(t, twoTenants+"[tenants.b.quotas]\nmemory = \"64MiB\"\n")
	ctx := context.Background()
	b := mustConnect(t, f, keyB, stateless, nil)
	if a := rawPost(t, f.url, keyB, echoHeaders, echoBody); a.Status != 429 || !strings.Contains(a.Messages[0], "guest memory") {
		t.Errorf("a call whose memory exceeds the quota: %+v, want a guest memory refusal", a)
	}
	if res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "slow_wait", Arguments: map[string]any{"seconds": 0}}); err != nil || res.IsError {
		t.Errorf("a native call under a memory quota: %+v %v", res, err)
	}

	// Room for one call (256 MiB, the default limit), not two: while secret_spin runs (until
	// its 200 ms deadline), a second Wasm call is refused. The spin may
	// end before the second call is admitted on a loaded machine, so the
	// pair is tried until the overlap is seen.
	g := newFixture(t, twoTenants+"[tenants.b.quotas]\nmemory = \"300MiB\"\n")
	gb := mustConnect(t, g, keyB, stateless, nil)
	seen := false
	for try := 0; try < 20 && !seen; try++ {
		spun := make(chan struct{})
		go func() {
			defer close(spun)
			gb.CallTool(ctx, &mcp.CallToolParams{Name: "secret_spin"})
		}()
		time.Sleep(20 * time.Millisecond)
		a := rawPost(t, g.url, keyB, echoHeaders, echoBody)
		seen = a.Status == 429 && strings.Contains(a.Messages[0], "guest memory")
		<-spun
	}
	if !seen {
		t.Error("a Wasm call beside another of 256 MiB under a 300 MiB quota was never refused")
	}
	// Alone, it fits: the spin's admission is released just after its
	// answer is sent, so the call is retried until then.
	var alone rawAnswer
	for try := 0; try < 100; try++ {
		if alone = rawPost(t, g.url, keyB, echoHeaders, echoBody); alone.Status == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if alone.Status != 200 || strings.Contains(alone.Messages[0], `"isError":true`) {
		t.Errorf("a call alone under the quota: %+v", alone)
	}
}

// The fuel and guest-time quotas charge what a call ran after it ends: a
// call that spins for its 200 ms spends more than the minute's budget,
// and the next call is refused until the budget refills.
func TestFuelAndGuestTimeQuotas(t *testing.T) {
	for _, tc := range []struct{ quota, name string }{
		{"fuel_per_minute = 1000000", "fuel"},
		{"guest_time_per_minute = \"50ms\"", "guest time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, twoTenants+"[tenants.b.quotas]\n"+tc.quota+"\n")
			ctx := context.Background()
			b := mustConnect(t, f, keyB, stateless, nil)
			b.CallTool(ctx, &mcp.CallToolParams{Name: "secret_spin"}) // a timeout, as a result
			if a := rawPost(t, f.url, keyB, echoHeaders, echoBody); a.Status != 429 || !strings.Contains(a.Messages[0], tc.name) || a.RetryAfter == "" {
				t.Errorf("a call after the budget was spent: %+v, want a %s refusal with Retry-After", a, tc.name)
			}
			metrics := scrapeMetrics(t, f)
			if !strings.Contains(metrics, `skillhost_quota_refusals_total{quota="`+tc.name+`",tenant="b"} 1`) {
				t.Errorf("the refusal is not counted")
			}
		})
	}
}
