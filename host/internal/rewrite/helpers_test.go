package rewrite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/skillhost/skillhost/internal/testenv"
)

// features are every core feature wazero v1.12.0 has: the corpus holds
// modules for each.
const features = api.CoreFeaturesV2 | experimental.CoreFeaturesThreads |
	experimental.CoreFeaturesTailCall | experimental.CoreFeaturesExtendedConst |
	experimental.CoreFeaturesExceptionHandling | experimental.CoreFeaturesTypedFunctionReferences

// raceEnabled is set under the race detector, which makes wazero 5-6 times
// slower: the long corpus tests then run a sample.
var raceEnabled bool

// compilerConfig is what the host runs guests with.
func compilerConfig() wazero.RuntimeConfig {
	return wazero.NewRuntimeConfigCompiler().WithCoreFeatures(features)
}

// interpreterConfig validates modules exactly like compilerConfig (wazero
// decodes and validates before either engine runs) but compiles a 4 MB Go
// guest in 0.15 s instead of 1.5 s; the corpus round trip uses it.
func interpreterConfig() wazero.RuntimeConfig {
	return wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(features)
}

// repoRoot is the root of the skillhost module.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	return root
}

var moduleDirs sync.Map

// moduleDir is the directory of a required module, from go list.
func moduleDir(t testing.TB, path string) string {
	t.Helper()
	if d, ok := moduleDirs.Load(path); ok {
		return d.(string)
	}
	dir, err := testenv.ModuleDir(path)
	if err != nil {
		t.Fatalf("locating module %s: %v", path, err)
	}
	moduleDirs.Store(path, dir)
	return dir
}

// walkWasm lists the .wasm files under dir.
func walkWasm(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	if dir == "" {
		return nil
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".wasm") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// corpusSet is a named group of .wasm files.
type corpusSet struct {
	name  string
	files []string
}

// corpus lists every module the round-trip tests run: the repository's
// guests and bundled pack modules, Extism go-sdk's test plugins and every
// .wasm in the wazero module (spec tests, fuzz cases, examples).
func corpus(t testing.TB) []corpusSet {
	t.Helper()
	root := repoRoot(t)
	bundled, err := filepath.Glob(filepath.Join(root, "packs", "bundled", "modules", "*", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var extism []string
	if d := moduleDir(t, "github.com/extism/go-sdk"); d != "" {
		extism, _ = filepath.Glob(filepath.Join(d, "wasm", "*.wasm"))
	}
	sets := []corpusSet{
		{"guests", append(walkWasm(t, filepath.Join(root, "testdata", "guests")), walkWasm(t, filepath.Join(root, "guests"))...)},
		{"bundled", bundled},
		{"extism", extism},
		{"wazero", walkWasm(t, moduleDir(t, "github.com/tetratelabs/wazero"))},
	}
	for _, s := range sets {
		sort.Strings(s.files)
	}
	return sets
}

// importsOf lists a compiled module's function imports as
// "module.name(params)results".
func importsOf(cm wazero.CompiledModule) []string {
	var list []string
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		list = append(list, mod+"."+name+sig(f))
	}
	return list
}

// exportsOf lists a compiled module's function and memory exports.
func exportsOf(cm wazero.CompiledModule) []string {
	var list []string
	for name, f := range cm.ExportedFunctions() {
		list = append(list, "func "+name+sig(f))
	}
	for name := range cm.ExportedMemories() {
		list = append(list, "memory "+name)
	}
	sort.Strings(list)
	return list
}

func sig(f api.FunctionDefinition) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range f.ParamTypes() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(api.ValueTypeName(p))
	}
	b.WriteString(")")
	for i, r := range f.ResultTypes() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(api.ValueTypeName(r))
	}
	return b.String()
}

// Builders of hand-written test modules.

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func u32(v uint32) []byte { return appendU32(nil, v) }

func str(s string) []byte { return appendName(nil, s) }

// vec is a vector of already encoded items.
func vec(items ...[]byte) []byte { return cat(u32(uint32(len(items))), cat(items...)) }

// sec is a section with its size.
func sec(id byte, contents ...[]byte) []byte {
	c := cat(contents...)
	return cat([]byte{id}, u32(uint32(len(c))), c)
}

// mod is a module of the given sections.
func mod(sections ...[]byte) []byte { return cat(header, cat(sections...)) }

// functype is 0x60 params results.
func functype(params, results []byte) []byte {
	return cat([]byte{0x60}, u32(uint32(len(params))), params, u32(uint32(len(results))), results)
}

// body is a function body with the given local declarations (count,
// type pairs) and code, which must end with end.
func body(locals []byte, nlocals int, code ...byte) []byte {
	c := cat(u32(uint32(nlocals)), locals, code)
	return cat(u32(uint32(len(c))), c)
}

func funcExport(name string, idx uint32) []byte { return cat(str(name), []byte{0x00}, u32(idx)) }

func funcImport(module, name string, typeIdx uint32) []byte {
	return cat(str(module), str(name), []byte{0x00}, u32(typeIdx))
}

// fuel is a host refuel function for tests: it hands out slice units of
// budget per call and, after limit calls (when limit > 0), stops the guest
// by panicking with errOutOfFuel.
type fuel struct {
	slice int64
	limit int64
	calls atomic.Int64
}

var errOutOfFuel = errors.New("test: out of fuel")

func (f *fuel) refuel(context.Context) int64 {
	if n := f.calls.Add(1); f.limit > 0 && n > f.limit {
		panic(errOutOfFuel)
	}
	return f.slice
}

// instantiateFuel instantiates the refuel host module in r.
func instantiateFuel(t testing.TB, ctx context.Context, r wazero.Runtime, f *fuel) {
	t.Helper()
	_, err := r.NewHostModuleBuilder(DefaultImportModule).
		NewFunctionBuilder().WithFunc(f.refuel).Export(DefaultImportName).
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
}

// instantiateTickFlag instantiates in r the module TickModule whose
// mutable i64 global TickGlobal is the tick flag, set to start, and
// returns the flag.
func instantiateTickFlag(t testing.TB, ctx context.Context, r wazero.Runtime, start uint64) api.MutableGlobal {
	t.Helper()
	tm, err := r.InstantiateWithConfig(ctx, mod(
		sec(secGlobal, vec([]byte{0x7e, 0x01, 0x42, 0x00, 0x0b})),
		sec(secExport, vec(cat(str(TickGlobal), []byte{0x03, 0x00}))),
	), wazero.NewModuleConfig().WithName(TickModule))
	if err != nil {
		t.Fatal(err)
	}
	g := tm.ExportedGlobal(TickGlobal).(api.MutableGlobal)
	g.Set(start)
	return g
}
