package rewrite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
)

// roundTrip instruments one module, counting fuel and with Options.Tick,
// and checks the contract: if wazero compiles the input, it compiles the
// output, whose function imports are the input's and the added import,
// and whose function and memory exports are unchanged. It returns whether
// the input compiled.
func roundTrip(ctx context.Context, r wazero.Runtime, in []byte) (compiled bool, err error) {
	orig, cerr := r.CompileModule(ctx, in)
	if cerr != nil {
		for _, tick := range []bool{false, true} {
			Instrument(in, Options{ExportGlobals: true, Tick: tick}) // must not panic
		}
		return false, nil // invalid input: Instrument only had not to panic
	}
	defer orig.Close(ctx)
	for _, tick := range []bool{false, true} {
		out, info, ierr := Instrument(in, Options{ExportGlobals: true, Tick: tick})
		if errors.Is(ierr, ErrAlreadyInstrumented) {
			return true, nil // a module importing the refuel function itself is refused
		}
		if ierr != nil {
			return true, fmt.Errorf("instrument (tick %v): %w", tick, ierr)
		}
		got, err := r.CompileModule(ctx, out)
		if err != nil {
			return true, fmt.Errorf("output (tick %v) does not compile: %w", tick, err)
		}
		defer got.Close(ctx)
		added := DefaultImportModule + "." + DefaultImportName + "()i64"
		if tick {
			added = DefaultImportModule + "." + DefaultTickImportName + "()i64"
		}
		wantImports := append(importsOf(orig), added)
		if d := cmp.Diff(wantImports, importsOf(got)); d != "" {
			return true, fmt.Errorf("imports (tick %v) (-want +got):\n%s", tick, d)
		}
		if d := cmp.Diff(exportsOf(orig), exportsOf(got)); d != "" {
			return true, fmt.Errorf("exports (tick %v) (-want +got):\n%s", tick, d)
		}
		if uint32(len(orig.ImportedFunctions())) != info.RefuelFunc {
			return true, fmt.Errorf("RefuelFunc = %d, want %d", info.RefuelFunc, len(orig.ImportedFunctions()))
		}
	}
	return true, nil
}

func TestRoundTripCorpus(t *testing.T) {
	ctx := context.Background()
	for _, set := range corpus(t) {
		t.Run(set.name, func(t *testing.T) {
			if len(set.files) == 0 {
				t.Skip("no modules found")
			}
			r := wazero.NewRuntimeWithConfig(ctx, interpreterConfig())
			defer r.Close(ctx)
			var (
				mu       sync.Mutex
				compiled int
				wg       sync.WaitGroup
				next     = make(chan string)
			)
			for w := 0; w < runtime.GOMAXPROCS(0); w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for f := range next {
						in, err := os.ReadFile(f)
						if err != nil {
							t.Error(err)
							continue
						}
						ok, err := roundTrip(ctx, r, in)
						mu.Lock()
						if ok {
							compiled++
						}
						mu.Unlock()
						if err != nil {
							t.Errorf("%s: %v", filepath.Base(f), err)
						}
					}
				}()
			}
			for _, f := range set.files {
				next <- f
			}
			close(next)
			wg.Wait()
			t.Logf("%d modules, %d compile under wazero and round-tripped", len(set.files), compiled)
		})
	}
}

var _ = errors.Is
