package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost"
)

// BenchmarkServeThroughput compares calls through streamable HTTP on
// loopback (stateless revision, in this same process) with the same calls
// made by Run.Call in process, at 1, 16 and 64 concurrent callers, for a
// tiny guest and for the bundled slugify. Two clients are measured: one
// go-sdk client session per caller (http), and a plain net/http client
// posting the same JSON-RPC request (raw), whose own cost is small enough
// that the server's shows. The in-process figure is measured in the same
// run; http/in-process and raw/in-process are the ratios of throughputs.
func BenchmarkServeThroughput(b *testing.B) {
	f := newFixture(b, twoTenants)
	ctx := context.Background()
	tools := []struct{ name, tenant, key, args string }{
		{"secret_echo", "b", keyB, `{"text":"hi"}`},        // a tiny guest: the server's own cost shows
		{"slugify", "a", keyA, `{"text":"Hello, World!"}`}, // a real Go guest of the bundled pack
	}
	for _, tool := range tools {
		args := json.RawMessage(tool.args)
		for _, clients := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("tool=%s/clients=%d", tool.name, clients), func(b *testing.B) {
				sessions := make([]*mcp.ClientSession, clients)
				for i := range sessions {
					sessions[i] = mustConnect(b, f, tool.key, stateless, nil)
					if _, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: args}); err != nil {
						b.Fatal(err)
					}
				}
				run, err := f.e.NewRun(skillhost.RunContext{Tenant: tool.tenant}, nil)
				if err != nil {
					b.Fatal(err)
				}
				inProc := func(int) error {
					res, err := run.Call(ctx, tool.name, args, nil)
					if err == nil && res.IsError {
						err = fmt.Errorf("%v", res.Error)
					}
					return err
				}
				// Every caller's warm instance is made before either side
				// is measured.
				rate(4*clients, clients, inProc)
				inProcess := rate(b.N, clients, inProc)
				b.ResetTimer()
				overHTTP := rate(b.N, clients, func(i int) error {
					res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: args})
					if err == nil && res.IsError {
						err = fmt.Errorf("%s", text(res))
					}
					return err
				})
				b.StopTimer()
				raw := rawClient(b, f, tool.key, tool.name, tool.args, clients)
				overRaw := rate(b.N, clients, func(int) error { return raw() })
				b.ReportMetric(overHTTP, "http-calls/s")
				b.ReportMetric(overRaw, "raw-calls/s")
				b.ReportMetric(inProcess, "inproc-calls/s")
				b.ReportMetric(overHTTP/inProcess, "http/in-process")
				b.ReportMetric(overRaw/inProcess, "raw/in-process")
			})
		}
	}
}

// rawClient returns a function that makes one stateless tools/call of
// tool with a plain net/http client (conns connections kept alive) and
// checks that it succeeded.
func rawClient(b *testing.B, f *fixture, key, tool, args string, conns int) func() error {
	body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":%q}}}`, tool, args, stateless))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	b.Cleanup(client.CloseIdleConnections)
	return func() error {
		resp, err := client.Do(statelessCall(f, key, tool, bytes.NewReader(body)))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"result"`)) || bytes.Contains(out, []byte(`"isError":true`)) {
			return fmt.Errorf("%s: %d %s", tool, resp.StatusCode, out)
		}
		return nil
	}
}

// rate makes n calls of call from clients goroutines (call gets the
// goroutine's index) and returns the calls per second.
func rate(n, clients int, call func(i int) error) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := call(i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		panic(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkNoisyNeighbour measures the p99 latency of tenant a's calls
// over HTTP, alone and while tenant b keeps its concurrency quota full of
// guests that spin to their 200 ms deadline; noisy-p99/quiet-p99 is the
// ratio.
func BenchmarkNoisyNeighbour(b *testing.B) {
	f := newFixture(b, twoTenants+`
[tenants.b.quotas]
concurrent_calls = 2
`)
	ctx := context.Background()
	a := mustConnect(b, f, keyA, stateless, nil)
	args := map[string]any{"text": "Noisy Neighbour"}
	latencies := func(n int) []time.Duration {
		out := make([]time.Duration, 0, n)
		for range n {
			start := time.Now()
			res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("slugify: %+v, %v", res, err)
			}
			out = append(out, time.Since(start))
		}
		return out
	}
	latencies(5) // warm
	n := max(b.N, 50)
	b.ResetTimer()
	quiet := latencies(n)
	noisyCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := mustConnect(b, f, keyB, stateless, nil)
			for noisyCtx.Err() == nil {
				cs.CallTool(noisyCtx, &mcp.CallToolParams{Name: "secret_spin"})
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	noisy := latencies(n)
	stop()
	wg.Wait()
	b.StopTimer()
	qp, np := p99(quiet), p99(noisy)
	b.ReportMetric(float64(qp.Microseconds())/1000, "quiet-p99-ms")
	b.ReportMetric(float64(np.Microseconds())/1000, "noisy-p99-ms")
	b.ReportMetric(float64(np)/float64(qp), "noisy/quiet")
}

func p99(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}
