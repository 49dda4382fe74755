package skillhost_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/skillhost/skillhost"
)

// BenchmarkEngineCall calls a bundled text tool (slugify, a standard-Go
// guest) through Engine.Call as an embedding application does: argument
// validation, the grant, a fresh-state call restored from the module's
// snapshot. The parallel variant calls from GOMAXPROCS goroutines: run
// with -cpu 1,2 and compare calls/s.
func BenchmarkEngineCall(b *testing.B) {
	ctx := context.Background()
	e, err := skillhost.Open(ctx, skillhost.Config{StateDir: stateDir, NoUserSources: true,
		IndexPath: filepath.Join(b.TempDir(), "index.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	args := json.RawMessage(`{"text":"Hello, Wörld! Fresh state in microseconds"}`)
	const want = `{"slug":"hello-world-fresh-state-in-microseconds"}`
	if res, err := e.Call(ctx, "slugify", args, nil); err != nil || string(res.Output) != want {
		b.Fatalf("slugify: %s, %v", res.Output, err)
	}
	b.Run("tool=slugify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Call(ctx, "slugify", args, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
	b.Run("tool=slugify/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := e.Call(ctx, "slugify", args, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
}
