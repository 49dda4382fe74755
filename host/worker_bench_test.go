package host_test

// Benchmarks of calls in worker processes against the same calls
// in-process, in one run, named guest=…/isolation=… so that benchstat can
// pivot on the isolation:
//
//	go test -run '^$' -bench Isolation -benchmem -count=10 ./host > bench.txt
//	benchstat -col /isolation bench.txt

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/skillhost/skillhost/host"
)

// isolationBenchCases are trivial exports: what is measured is the cost
// of a call, not of the guest's work.
var isolationBenchCases = []struct {
	name, file, export, input string
}{
	{name: "wat-noop", file: "wat/echo.wasm", export: "noop"},
	{name: "wat-echo-4KiB", file: "wat/echo.wasm", export: "echo", input: strings.Repeat("x", 4<<10)},
	{name: "go-noop", file: "go/gobench/gobench.wasm", export: "noop"},
}

// BenchmarkIsolationCall measures one call after another: the fixed cost
// a worker process adds to a call (two pipe round trips, the frames).
func BenchmarkIsolationCall(b *testing.B) {
	skipWithoutWorkers(b)
	h := newHost(b, testConfig().WithWorkers(1))
	for _, c := range isolationBenchCases {
		m := load(b, h, c.file)
		for _, iso := range []host.Isolation{host.IsolationInProcess, host.IsolationProcess} {
			b.Run("guest="+c.name+"/isolation="+string(iso), func(b *testing.B) {
				opts := &host.CallOptions{Grant: host.Grant{Isolation: iso}}
				input := []byte(c.input)
				if _, err := m.Call(context.Background(), c.export, input, opts); err != nil { // start the worker, load the module
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.Call(context.Background(), c.export, input, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkIsolationParallel measures throughput with GOMAXPROCS callers
// and as many workers.
func BenchmarkIsolationParallel(b *testing.B) {
	skipWithoutWorkers(b)
	n := runtime.GOMAXPROCS(0)
	h := newHost(b, testConfig().WithWorkers(n))
	for _, c := range isolationBenchCases {
		m := load(b, h, c.file)
		for _, iso := range []host.Isolation{host.IsolationInProcess, host.IsolationProcess} {
			b.Run("guest="+c.name+"/isolation="+string(iso), func(b *testing.B) {
				opts := &host.CallOptions{Grant: host.Grant{Isolation: iso}}
				input := []byte(c.input)
				var wg sync.WaitGroup
				for range n { // start every worker and load the module in each
					wg.Add(1)
					go func() {
						defer wg.Done()
						m.Call(context.Background(), c.export, input, opts)
					}()
				}
				wg.Wait()
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := m.Call(context.Background(), c.export, input, opts); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
