package rewrite

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The WebAssembly spec tests as wast2json wrote them for wazero.
type (
	specScript struct {
		Commands []specCommand `json:"commands"`
	}
	specCommand struct {
		Type     string      `json:"type"`
		Line     int         `json:"line"`
		Name     string      `json:"name"`
		Filename string      `json:"filename"`
		As       string      `json:"as"`
		Action   *specAction `json:"action"`
	}
	specAction struct {
		Type   string      `json:"type"`
		Module string      `json:"module"`
		Field  string      `json:"field"`
		Args   []specValue `json:"args"`
	}
	specValue struct {
		Type     string `json:"type"`
		LaneType string `json:"lane_type"`
		Value    any    `json:"value"`
	}
)

// specArgs encodes an action's arguments as wazero takes them; ok is false
// for a value this runner does not encode.
func specArgs(vals []specValue) (args []uint64, ok bool) {
	for _, v := range vals {
		switch v.Type {
		case "i32", "i64", "f32", "f64":
			s, _ := v.Value.(string)
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, false
			}
			args = append(args, n)
		case "externref", "funcref":
			s, _ := v.Value.(string)
			if s == "null" {
				args = append(args, 0)
				continue
			}
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil || v.Type == "funcref" {
				return nil, false
			}
			args = append(args, n+1) // non-null
		case "v128":
			lanes, _ := v.Value.([]any)
			var b [16]byte
			size := map[string]int{"i8": 1, "i16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}[v.LaneType]
			if size == 0 || len(lanes)*size != 16 {
				return nil, false
			}
			for i, l := range lanes {
				s, _ := l.(string)
				n, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return nil, false
				}
				var tmp [8]byte
				binary.LittleEndian.PutUint64(tmp[:], n)
				copy(b[i*size:], tmp[:size])
			}
			args = append(args, binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:]))
		default:
			return nil, false
		}
	}
	return args, true
}

// specSide runs a script's modules, as given or instrumented.
type specSide struct {
	r                wazero.Runtime
	instrument, tick bool
	named            map[string]api.Module
	last             api.Module
	ticks            atomic.Uint64 // calls of the tick function
}

// newSpecSide makes a runtime for the modules as given, or instrumented
// counting fuel, or instrumented with Options.Tick (tick). Its tick
// function keeps the checks busy, in a cycle of three calls: it returns
// 0 (an entry goes on, a loop head checks again), then the flag (seen
// until it changes), then the flag and changes it for the next checks.
func newSpecSide(t *testing.T, ctx context.Context, spectestWasm []byte, instrument, tick bool) *specSide {
	s := &specSide{r: wazero.NewRuntimeWithConfig(ctx, compilerConfig()), instrument: instrument, tick: tick, named: map[string]api.Module{}}
	t.Cleanup(func() { s.r.Close(ctx) })
	if _, err := s.r.InstantiateWithConfig(ctx, spectestWasm, wazero.NewModuleConfig().WithName("spectest")); err != nil {
		t.Fatal(err)
	}
	switch {
	case tick:
		calls := &s.ticks
		var flag api.MutableGlobal
		_, err := s.r.NewHostModuleBuilder(DefaultImportModule).NewFunctionBuilder().
			WithFunc(func(context.Context) uint64 {
				switch calls.Add(1) % 3 {
				case 0:
					return 0
				case 1:
					return flag.Get()
				}
				v := flag.Get()
				flag.Set(v + 1)
				return v
			}).Export(DefaultTickImportName).Instantiate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		flag = instantiateTickFlag(t, ctx, s.r, 1)
	case instrument:
		instantiateFuel(t, ctx, s.r, &fuel{slice: 10_000})
	}
	return s
}

// load instantiates a module; a nil error means it instantiated.
func (s *specSide) load(ctx context.Context, wasm []byte, name, register string) error {
	s.last = nil
	if s.instrument {
		out, _, err := Instrument(wasm, Options{ExportGlobals: true, Tick: s.tick})
		if err != nil {
			return fmt.Errorf("instrument: %w", err)
		}
		wasm = out
	}
	m, err := s.r.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(register))
	if err != nil {
		return err
	}
	s.last = m
	if name != "" {
		s.named[name] = m
	}
	return nil
}

// act runs an action and describes its outcome: results, or the first
// line of the error (the stack trace below it names functions by index).
func (s *specSide) act(ctx context.Context, a *specAction, args []uint64) string {
	m := s.last
	if a.Module != "" {
		m = s.named[a.Module]
	}
	if m == nil {
		return "no module"
	}
	switch a.Type {
	case "invoke":
		fn := m.ExportedFunction(a.Field)
		if fn == nil {
			return "no function " + a.Field
		}
		res, err := fn.Call(ctx, args...)
		if err != nil {
			return "error: " + strings.SplitN(err.Error(), "\n", 2)[0]
		}
		return describe(fn.Definition().ResultTypes(), res)
	case "get":
		g := m.ExportedGlobal(a.Field)
		if g == nil {
			return "no global " + a.Field
		}
		return describe([]api.ValueType{g.Type()}, []uint64{g.Get()})
	}
	return "unknown action " + a.Type
}

// describe formats values of the given types. References other than
// externref (funcref, exnref, typed references) are pointers into the
// runtime: only whether they are null is comparable.
func describe(types []api.ValueType, vals []uint64) string {
	var b strings.Builder
	for _, t := range types {
		if len(vals) == 0 {
			break
		}
		switch t {
		case api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeF32, api.ValueTypeF64, api.ValueTypeExternref:
			fmt.Fprintf(&b, "%s:%#x ", api.ValueTypeName(t), vals[0])
		case 0x7b: // v128: two uint64s
			if len(vals) < 2 {
				return b.String() + "short v128"
			}
			fmt.Fprintf(&b, "v128:%#x,%#x ", vals[0], vals[1])
			vals = vals[1:]
		default:
			fmt.Fprintf(&b, "ref(%#x):null=%v ", t, vals[0] == 0)
		}
		vals = vals[1:]
	}
	return b.String()
}

// TestSpecSameBehaviour replays the spec test scripts of the wazero module
// against the modules as given and as instrumented, counting fuel and
// with the tick check: every module that
// instantiates must instantiate instrumented, and every action (the
// scripts' assertions hold about 65,000) must give the same results or the
// same trap.
func TestSpecSameBehaviour(t *testing.T) {
	dir := moduleDir(t, "github.com/tetratelabs/wazero")
	if dir == "" {
		t.Skip("wazero module not found")
	}
	spec := filepath.Join(dir, "internal", "integration_test", "spectest")
	spectestWasm, err := os.ReadFile(filepath.Join(spec, "testdata", "spectest.wasm"))
	if err != nil {
		t.Skip(err)
	}
	scripts, _ := filepath.Glob(filepath.Join(spec, "*", "testdata", "*.json"))
	switch {
	case testing.Short():
		scripts, _ = filepath.Glob(filepath.Join(spec, "v2", "testdata", "[a-f]*.json"))
	case raceEnabled: // every fourth script: the race detector makes the whole set take a minute
		var sample []string
		for i := 0; i < len(scripts); i += 4 {
			sample = append(sample, scripts[i])
		}
		scripts = sample
	}
	ctx := context.Background()
	var modules, actions atomic.Int64
	var ticks atomic.Uint64
	t.Cleanup(func() {
		t.Logf("%d scripts: %d modules instantiated, %d actions gave the same outcome instrumented (%d tick calls)",
			len(scripts), modules.Load(), actions.Load(), ticks.Load())
		if ticks.Load() == 0 {
			t.Error("no check called the tick function: the tick check went untested")
		}
	})
	for _, script := range scripts {
		rel, _ := filepath.Rel(spec, script)
		t.Run(strings.TrimSuffix(rel, ".json"), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			var s specScript
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			orig := newSpecSide(t, ctx, spectestWasm, false, false)
			sides := []*specSide{newSpecSide(t, ctx, spectestWasm, true, false), newSpecSide(t, ctx, spectestWasm, true, true)}
			defer func() { ticks.Add(sides[1].ticks.Load()) }()
			for i := 0; i < len(s.Commands); i++ {
				c := s.Commands[i]
				switch c.Type {
				case "module":
					wasm, err := os.ReadFile(filepath.Join(filepath.Dir(script), c.Filename))
					if err != nil {
						t.Fatal(err)
					}
					register := ""
					if i+1 < len(s.Commands) && s.Commands[i+1].Type == "register" {
						register = s.Commands[i+1].As
						i++
					}
					errOrig := orig.load(ctx, wasm, c.Name, register)
					for _, inst := range sides {
						errInst := inst.load(ctx, wasm, c.Name, register)
						if errOrig == nil && errInst != nil {
							t.Errorf("line %d: %s: instrumented module (tick %v) fails: %v", c.Line, c.Filename, inst.tick, errInst)
						} else if errOrig != nil && errInst == nil {
							t.Errorf("line %d: %s: instrumented module (tick %v) instantiates, the original fails: %v", c.Line, c.Filename, inst.tick, errOrig)
						}
					}
					if errOrig == nil {
						modules.Add(1)
					}
				case "assert_return", "assert_trap", "assert_exhaustion", "assert_exception", "action":
					if c.Action == nil {
						continue
					}
					args, ok := specArgs(c.Action.Args)
					if !ok {
						continue
					}
					want := orig.act(ctx, c.Action, args)
					for _, inst := range sides {
						got := inst.act(ctx, c.Action, args)
						if d := cmp.Diff(want, got); d != "" {
							t.Errorf("line %d: %s %s(%v) (-original +instrumented, tick %v):\n%s", c.Line, c.Type, c.Action.Field, args, inst.tick, d)
						}
					}
					actions.Add(1)
				}
			}
		})
	}
}
