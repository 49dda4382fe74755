package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// tickModuleWasm is the module whose one global is the tick flag that
// modules rewritten with rewrite.Options.Tick import:
// (module (global (export "flag") (mut i64) (i64.const 1))). It starts at
// a count: see ticker.
var tickModuleWasm = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x06, 0x06, 0x01, 0x7e, 0x01, 0x42, 0x01, 0x0b, // global section
	0x07, 0x08, 0x01, 0x04, 'f', 'l', 'a', 'g', 0x03, 0x00, // export section
}

// instantiateTickModule instantiates the tick flag's module in rt and
// returns it and the address of the flag's value.
func instantiateTickModule(ctx context.Context, rt wazero.Runtime) (api.Module, *uint64, error) {
	mod, err := rt.InstantiateWithConfig(ctx, tickModuleWasm, wazero.NewModuleConfig().WithName(rewrite.TickModule))
	if err != nil {
		return nil, nil, err
	}
	flag, err := globalValueAddr(mod.ExportedGlobal(rewrite.TickGlobal))
	if err != nil {
		mod.Close(ctx)
		return nil, nil, err
	}
	return mod, flag, nil
}

// tickGeneration marks the values the ticker writes into the tick flag,
// against the expiration counts the kernel writes (see ticker).
const tickGeneration = 1 << 63

// errGlobalLayout is returned by globalValueAddr when wazero does not keep
// a global's value where it expects.
var errGlobalLayout = errors.New("wazero does not keep global values where skillhost expects them")

// globalValueAddr returns the address of the value of g, a mutable i64
// global that a Wasm module (not a host module) defines and exports.
// wazero v1.12.0 does not expose it: its compiler keeps the value in the
// defining module's context (moduleEngine.opaque), and every module
// importing the global reads it through a pointer to that word. g is an
// api.MutableGlobal wrapping a *wasm.GlobalInstance whose Me is the
// *wazevo.moduleEngine. Reached by reflection, the context is then searched
// for the value: set through g to two different markers, each must be
// found at one and the same aligned word, and a word written there must be
// what g reads. Any other layout gives errGlobalLayout, and the host counts
// fuel for every call instead (TestTickFlagLayout pins the layout).
func globalValueAddr(g api.Global) (p *uint64, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%w: %v", errGlobalLayout, r)
		}
	}()
	mg, ok := g.(api.MutableGlobal)
	if !ok || g.Type() != api.ValueTypeI64 {
		return nil, fmt.Errorf("%w: not a mutable i64 global", errGlobalLayout)
	}
	v := reflect.ValueOf(g)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %s", errGlobalLayout, v.Type())
	}
	gi := v.FieldByName("g")
	if gi.Kind() != reflect.Pointer || gi.IsNil() {
		return nil, fmt.Errorf("%w: %s has no global instance", errGlobalLayout, v.Type())
	}
	me := gi.Elem().FieldByName("Me")
	if me.Kind() != reflect.Interface || me.IsNil() {
		return nil, fmt.Errorf("%w: the global has no module engine", errGlobalLayout)
	}
	me = me.Elem()
	if me.Kind() != reflect.Pointer || me.IsNil() || me.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: module engine %s", errGlobalLayout, me.Type())
	}
	op := me.Elem().FieldByName("opaque")
	if op.Kind() != reflect.Slice || op.Type().Elem().Kind() != reflect.Uint8 || op.Len() < 8 {
		return nil, fmt.Errorf("%w: module engine %s has no context", errGlobalLayout, me.Type())
	}
	ctxBytes := unsafe.Slice((*byte)(op.UnsafePointer()), op.Len())
	find := func(marker uint64) int {
		mg.Set(marker)
		at := -1
		for i := 0; i+8 <= len(ctxBytes); i += 8 {
			if binary.LittleEndian.Uint64(ctxBytes[i:]) == marker {
				if at >= 0 {
					return -1
				}
				at = i
			}
		}
		return at
	}
	at := find(0x5ce11e515ce11e51)
	if at < 0 || find(0x0b5e55ed0b5e55ed) != at {
		return nil, fmt.Errorf("%w: the value is not in the module context", errGlobalLayout)
	}
	p = (*uint64)(unsafe.Pointer(&ctxBytes[at]))
	atomic.StoreUint64(p, 0x7a11e1)
	if mg.Get() != 0x7a11e1 {
		return nil, fmt.Errorf("%w: a write to the value is not what the global reads", errGlobalLayout)
	}
	mg.Set(1)
	return p, nil
}

// tick is the host function a guest rewritten with the tick check calls
// when the flag differs from what it saw last: the deadline is checked
// here, with the clock (the context's timer fires only when the scheduler
// gets to it), and other goroutines get to run. It returns what the guest
// is to have seen: a generation of the ticker, so that the guest calls
// again only when the flag changes, or 0 while the flag holds a count the
// kernel wrote (see ticker), so that the guest calls at every check until
// the ticker has run. A loop head's check calls again at once after a 0
// (see rewrite's package documentation): a guest there waits in this
// function, yielding each time, until the ticker writes the generation,
// which it does as soon as it runs after the kernel's write.
func (in *instance) tick(ctx context.Context) uint64 {
	in.stopIfDue(ctx)
	in.pause(ctx)
	if v := atomic.LoadUint64(in.m.h.tick.flag); v&tickGeneration != 0 {
		return v
	}
	return 0
}
