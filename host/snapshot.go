package host

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero/api"
)

// Fresh state at pool speed.
//
// A call must not see anything an earlier call wrote, yet instantiating a Go
// guest and running its runtime initialisation takes milliseconds. So for a
// metered module (whose mutable globals the rewriter exports) the host keeps
// the state of an instance right after initialisation — linear memory and
// globals — and returns each instance to that state after a call, in place
// of a new one: a memory copy instead of an instantiation. Host-side state
// (kernel memory, vars, the last HTTP response, logs) is reset per call.
//
// An instance is discarded instead when the call trapped, timed out or hit
// a limit, when its memory grew (wasm memory cannot shrink back), or after
// maxReuse calls (bounding anything outside memory and globals, such as
// WASI descriptors a guest left open). A module whose code changes its
// tables, or whose mutable globals are not plain numbers, gets a new
// instance per call.

const (
	// maxReuse bounds how many calls one restored instance serves.
	maxReuse = 1000
	// maxStates bounds how many instantiation profiles (mounts, env, memory
	// cap) a module keeps restorable instances for.
	maxStates = 16
)

// snapshot is an instance's state right after its initialisation.
type snapshot struct {
	mem     []byte
	globals []uint64
}

// freshPool holds restored instances for one instantiation profile.
type freshPool struct {
	mu   sync.Mutex
	snap *snapshot
	idle []*instance
}

// snapshottable reports whether restoring memory and globals gives an
// instance exactly the state of a new one.
func (c *compiled) snapshottable() bool {
	if !c.metered || c.writesOutside {
		return false
	}
	for _, g := range c.globals {
		switch g.Type {
		case 0x7f, 0x7e, 0x7d, 0x7c: // i32 i64 f32 f64
		default:
			return false
		}
	}
	return true
}

// profile identifies what an instance fixes at instantiation: the mounts,
// the environment and the memory cap. Calls whose grants agree on these can
// share restored instances; everything else is set per call.
func profile(g Grant, limits Limits) string {
	var b strings.Builder
	for _, m := range g.Mounts {
		fmt.Fprintf(&b, "m%q%q%v;", m.HostPath, cleanGuest(m.GuestPath), m.ReadOnly)
	}
	names := make([]string, 0, len(g.Env))
	for k := range g.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "e%q%q;", k, g.Env[k])
	}
	fmt.Fprintf(&b, "M%d", limits.MaxMemoryBytes)
	return b.String()
}

func (m *Module) freshPool(key string) *freshPool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fp, ok := m.fresh[key]; ok {
		return fp
	}
	if len(m.fresh) >= maxStates {
		return nil
	}
	if m.fresh == nil {
		m.fresh = map[string]*freshPool{}
	}
	fp := &freshPool{}
	m.fresh[key] = fp
	return fp
}

func (fp *freshPool) get() *instance {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if n := len(fp.idle); n > 0 {
		in := fp.idle[n-1]
		fp.idle = fp.idle[:n-1]
		return in
	}
	return nil
}

// take records the state of a just-initialised instance, once per pool.
func (fp *freshPool) take(in *instance) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.snap != nil {
		return
	}
	s := &snapshot{}
	if mem := in.memory(); mem != nil {
		buf, _ := mem.Read(0, mem.Size())
		s.mem = append([]byte(nil), buf...)
	}
	for _, g := range in.globals() {
		s.globals = append(s.globals, g.Get())
	}
	fp.snap = s
}

// put restores in to the snapshot and keeps it for the next call; it
// reports false when in cannot be restored and must be closed.
func (fp *freshPool) put(in *instance) bool {
	fp.mu.Lock()
	snap := fp.snap
	fp.mu.Unlock()
	if snap == nil || in.uses >= maxReuse {
		return false
	}
	if err := in.restore(snap); err != nil {
		return false
	}
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if len(fp.idle) >= 2*runtime.GOMAXPROCS(0) {
		return false
	}
	fp.idle = append(fp.idle, in)
	return true
}

var errGrown = errors.New("memory grew during the call")

// memory returns the instance's linear memory, or nil when the module has
// none (wazero then returns a non-nil interface holding a nil memory).
func (in *instance) memory() api.Memory {
	if !in.m.c.info.hasMemory {
		return nil
	}
	return in.mod.Memory()
}

// globals returns the instance's exported mutable globals, in the order
// of compiled.globals.
func (in *instance) globals() []api.MutableGlobal {
	if in.mutGlobals == nil && len(in.m.c.globals) > 0 {
		for _, ge := range in.m.c.globals {
			g, _ := in.mod.ExportedGlobal(ge.Export).(api.MutableGlobal)
			in.mutGlobals = append(in.mutGlobals, g)
		}
	}
	return in.mutGlobals
}

// restore puts the snapshot's memory and globals back and clears what the
// host keeps per instance.
func (in *instance) restore(s *snapshot) error {
	if mem := in.memory(); mem != nil {
		if mem.Size() != uint32(len(s.mem)) {
			return errGrown
		}
		buf, ok := mem.Read(0, mem.Size())
		if !ok {
			return errGrown
		}
		copy(buf, s.mem)
	}
	for i, g := range in.globals() {
		if g == nil {
			return fmt.Errorf("global %s is not exported", in.m.c.globals[i].Export)
		}
		g.Set(s.globals[i])
	}
	in.vars, in.varBytes = nil, 0
	in.httpStatus, in.httpHeaders = 0, nil
	return nil
}
