package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// openBundled opens an engine over the bundled pack only, keeping its
// state (compilation cache and index) in stateDir, and serves it.
func openBundled(tb testing.TB, stateDir, toml string) (*skillhost.Engine, *server.Server) {
	tb.Helper()
	cfg, err := packs.ParseConfig(filepath.Join(stateDir, "skillhost.toml"), []byte("[sources]\nuser = \"\"\nworkspace = \"\"\n"+toml))
	if err != nil {
		tb.Fatal(err)
	}
	hub := server.NewEventHub(nil)
	e, err := skillhost.Open(context.Background(), skillhost.Config{StateDir: stateDir, Operator: cfg, NoUserSources: true, Events: hub})
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(e, &server.Options{Config: serveconf.Of(cfg), Events: hub, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		e.Close(context.Background())
		tb.Fatal(err)
	}
	return e, srv
}

// BenchmarkServeToReady is the time from a server's start (opening the
// engine on the bundled pack, indexing it) to ready (every module
// compiled): cold, with an empty state folder, and warm, with the
// compilation cache and index a previous start left.
func BenchmarkServeToReady(b *testing.B) {
	start := func(b *testing.B, dir string) {
		t0 := time.Now()
		e, srv := openBundled(b, dir, "")
		rep, err := srv.Warm(context.Background(), nil)
		if err != nil || len(rep.Failed) > 0 || rep.Modules == 0 {
			b.Fatalf("warm: %+v, %v", rep, err)
		}
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "ms-to-ready")
		b.ReportMetric(float64(rep.Modules), "modules")
		srv.Close()
		e.Close(context.Background())
	}
	b.Run("cold", func(b *testing.B) {
		// Compiling the bundled Go guests from nothing takes half a minute
		// on a small machine: CI's run of every benchmark once
		// (-benchtime=1x) keeps this one compiling and leaves it to
		// make bench.
		if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
			b.Skip("a cold start compiles every bundled module; run it with make bench")
		}
		for range b.N {
			start(b, b.TempDir())
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := filepath.Join(testenv.StateDir(), "serve-bench")
		start(b, dir) // fills the state folder when a run before has not
		b.ResetTimer()
		for range b.N {
			start(b, dir)
		}
	})
}

// rss reads the process's resident and peak resident memory, in bytes,
// from /proc/self/status (0 where there is none).
func rss() (now, peak uint64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		for _, k := range []struct {
			prefix string
			to     *uint64
		}{{"VmRSS:", &now}, {"VmHWM:", &peak}} {
			if rest, ok := strings.CutPrefix(line, k.prefix); ok {
				kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				*k.to = kb << 10
			}
		}
	}
	return now, peak
}

// BenchmarkTenantsMemory serves the bundled pack to 100 tenants (and, to
// compare, to one), each of which opens an MCP session over streamable
// HTTP and calls every bundled tool once (with its first example's
// arguments), and reports the process's resident memory against the
// configured memory_budget. Each tenant's grant has a memory cap of its
// own, so no two tenants share a warm instance or a snapshot: without the
// budget every tenant would hold its own of every module.
func BenchmarkTenantsMemory(b *testing.B) {
	for _, c := range []struct {
		tenants int
		budget  uint64
		name    string
		tick    bool
	}{{1, 256 << 20, "256MiB", true}, {1, 256 << 20, "256MiB", false}, {100, 256 << 20, "256MiB", true}, {100, 1 << 40, "none", true}} {
		b.Run(fmt.Sprintf("tenants=%d/budget=%s/tick=%v", c.tenants, c.name, c.tick), func(b *testing.B) { benchmarkTenantsMemory(b, c.tenants, c.budget, c.tick) })
	}
}

// benchmarkTenantsMemory serves tenants, each calling every bundled tool;
// tick is [server] tick_check. With it (the default) a module gets the
// module with the tick check, and its machine code twice, only after a
// long call, which the bundled tools' examples are not: both should hold
// the same memory.
func benchmarkTenantsMemory(b *testing.B, tenants int, budget uint64, tick bool) {
	var toml strings.Builder
	fmt.Fprintf(&toml, "[server]\nmemory_budget = %d\ntick_check = %v\nshared_packs = [\"core\"]\n", budget, tick)
	keys := make([]string, tenants)
	for i := range tenants {
		keys[i] = fmt.Sprintf("sk_bench_tenant_%03d_key", i)
		fmt.Fprintf(&toml, "[tenants.t%03d]\napi_keys = [%q]\n", i, serveconf.HashKey(keys[i]))
		fmt.Fprintf(&toml, "[tenants.t%03d.grants.core]\nlimits = {max_memory = \"%dKiB\"}\n", i, 64<<10-64*i)
	}
	dir := filepath.Join(testenv.StateDir(), "serve-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		runtime.GC()
		debug.FreeOSMemory()
		before, _ := rss()
		e, srv := openBundled(b, dir, toml.String())
		if _, err := srv.Warm(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		type call struct {
			name string
			args map[string]any
		}
		var calls []call
		for _, t := range e.Tools() {
			if t.Pack != "core" {
				continue
			}
			args := map[string]any{}
			if len(t.Examples) > 0 {
				json.Unmarshal(t.Examples[0].Args, &args)
			}
			calls = append(calls, call{t.Name, args})
		}
		sessions := make([]*mcp.ClientSession, tenants)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 4)
		var failed sync.Map
		for i := range tenants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + server.MCPPath, MaxRetries: -1,
					HTTPClient: &http.Client{Transport: opsKeyTransport(keys[i])}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					failed.Store("connect "+keys[i], err)
					return
				}
				sessions[i] = cs
				for _, c := range calls {
					if _, err := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: c.args}); err != nil {
						failed.Store(c.name, err)
					}
				}
			}()
		}
		wg.Wait()
		failed.Range(func(k, v any) bool {
			b.Errorf("calling %s: %v", k, v)
			return true
		})
		// What the process holds once garbage is collected and returned:
		// the sessions, runs and compiled code, not the instances the
		// calls threw away.
		debug.FreeOSMemory()
		after, peak := rss()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap-inuse")
		b.ReportMetric(float64(after)/(1<<20), "MiB-rss")
		b.ReportMetric(float64(peak)/(1<<20), "MiB-rss-peak")
		b.ReportMetric(float64(after-min(after, before))/(1<<20), "MiB-rss-growth")
		b.ReportMetric(float64(after)/float64(budget), "rss/budget")
		ms2 := e.MemoryStats()
		b.ReportMetric(float64(ms2.Held)/(1<<20), "MiB-held")
		b.ReportMetric(float64(ms2.Evictions), "evictions")
		b.ReportMetric(float64(len(calls)), "tools")
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
		ts.Close()
		srv.Close()
		e.Close(context.Background())
	}
}
