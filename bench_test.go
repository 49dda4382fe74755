package skillhost_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost"
)

// BenchmarkEngineCall calls a bundled text tool (slugify, a standard-Go
// guest) through Engine.Call as an embedding application does: argument
// validation, the grant, a fresh-state call restored from the module's
// snapshot, with the tick check (which the module gets after one long
// call). The parallel variant calls from GOMAXPROCS goroutines: run with
// -cpu 1,2 and compare calls/s. The counted variant counts every call's
// fuel (Config.CountAllFuel), as short calls do by default.
func BenchmarkEngineCall(b *testing.B) {
	ctx := context.Background()
	args := json.RawMessage(`{"text":"Hello, Wörld! Fresh state in microseconds"}`)
	open := func(countAll bool) *skillhost.Engine {
		e, err := skillhost.Open(ctx, skillhost.Config{StateDir: stateDir, NoUserSources: true,
			IndexPath: filepath.Join(b.TempDir(), "index.db"), CountAllFuel: countAll})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close(ctx) })
		// As a server does before it is ready: no call waits on a
		// compiler.
		if _, failed, err := e.CompileModules(ctx, nil); err != nil || len(failed) > 0 {
			b.Fatal(err, failed)
		}
		const want = `{"slug":"hello-world-fresh-state-in-microseconds"}`
		if res, err := e.Call(ctx, "slugify", args, nil); err != nil || string(res.Output) != want {
			b.Fatalf("slugify: %s, %v", res.Output, err)
		}
		if countAll {
			return e
		}
		// One long call gives the module the tick check, made in the
		// background; wait until calls run it.
		long, _ := json.Marshal(map[string]string{"text": strings.Repeat("Fresh state in microseconds, ", 4096)})
		if _, err := e.Call(ctx, "slugify", long, nil); err != nil {
			b.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			res, err := e.Call(ctx, "slugify", args, nil)
			if err != nil {
				b.Fatal(err)
			}
			if !res.FuelCounted {
				return e
			}
			if time.Now().After(deadline) {
				b.Fatal("slugify still counts fuel a minute after a long call")
			}
		}
	}
	serial := func(e *skillhost.Engine) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Call(ctx, "slugify", args, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		}
	}
	e, counted := open(false), open(true)
	b.Run("tool=slugify", serial(e))
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
	b.Run("tool=slugify/counted", serial(counted))
}
