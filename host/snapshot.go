package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// Fresh state at pool speed.
//
// A call must not see anything an earlier call wrote, yet instantiating a Go
// guest and running its runtime initialisation takes milliseconds. So for a
// metered module (whose mutable globals the rewriter exports) the host keeps
// the state of an instance right after initialisation and its warm-up
// calls (LoadOptions.Warmup) — linear memory and globals — and returns each
// instance to that state after a call, in place of a new one; a new
// instance takes that state too instead of running its initialisers. On
// Linux the memory is a private mapping of the snapshot and a restore puts
// back only the pages the call wrote (see mappedMemory); elsewhere it is
// copied back whole. Host-side state (kernel memory, vars, the last HTTP
// response, logs) is reset per call.
//
// An instance is discarded instead when the call trapped, timed out or hit
// a limit, when its memory grew (wasm memory cannot shrink back), or after
// maxReuse calls (bounding anything outside memory and globals, such as
// WASI descriptors a guest left open). A module whose code changes its
// tables, or whose mutable globals are not plain numbers, gets a new
// instance per call.

const (
	// maxReuse bounds how many calls one restored instance serves. A new
	// instance of a Go guest costs milliseconds (wazero applies thousands
	// of data segments), so that at 1,000 its replacement was a quarter of
	// a short call's time (see RATIONALE.md).
	maxReuse = 10000
	// maxStates bounds how many instantiation profiles (mounts, env, memory
	// cap) a module keeps restorable instances for; with a memory budget,
	// which bounds what they hold together, maxBudgetedStates does.
	maxStates         = 16
	maxBudgetedStates = 1024
	// maxBudgetedIdle bounds the idle instances of one profile under a
	// memory budget (see freshPool.maxIdle).
	maxBudgetedIdle = 256
)

// snapshot is an instance's state right after its initialisation. Its
// memory is img where linear memory can be mapped (mappedSupported), else
// the bytes of mem.
type snapshot struct {
	mem     []byte
	img     *memImage
	globals []uint64
	// held charges the snapshot to the host's memory budget.
	held heldNode
}

// memSize is the size of the snapshot's linear memory.
func (s *snapshot) memSize() int {
	if s.img != nil {
		return s.img.size
	}
	return len(s.mem)
}

// freshPool holds restored instances for one instantiation profile.
type freshPool struct {
	// b is the host's memory budget, nil when it has none.
	b *memBudget
	// tick is set for calls that count no fuel: an instance that counts
	// it (the one that ran the initialisers, or one made before the
	// module rewritten with the tick check was ready) is not kept once
	// that module is ready.
	tick bool

	// snap is the state instances are restored to, nil until the first
	// instance is initialised and again once the budget dropped it.
	snap atomic.Pointer[snapshot]
	idle *idleSet

	// mu is held to set snap, and for coldReason, which is set when a
	// warm-up call failed: later snapshots are taken without warm-up.
	mu         sync.Mutex
	coldReason error
}

// errWarmup is returned by take when a warm-up call failed: the instance
// it ran in must be discarded.
var errWarmup = errors.New("warm-up call failed")

// warm reports whether the pool's snapshot is to be taken after warm-up.
func (fp *freshPool) warm() bool {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	return fp.coldReason == nil
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
	// Built without fmt: it is computed on every call.
	b := make([]byte, 0, 24)
	for _, m := range g.Mounts {
		b = append(b, 'm')
		b = strconv.AppendQuote(b, m.HostPath)
		b = strconv.AppendQuote(b, cleanGuest(m.GuestPath))
		b = strconv.AppendBool(b, m.ReadOnly)
		b = append(b, ';')
	}
	if len(g.Env) > 0 {
		names := make([]string, 0, len(g.Env))
		for k := range g.Env {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			b = append(b, 'e')
			b = strconv.AppendQuote(b, k)
			b = strconv.AppendQuote(b, g.Env[k])
			b = append(b, ';')
		}
	}
	b = append(b, 'M')
	b = strconv.AppendUint(b, limits.MaxMemoryBytes, 10)
	return string(b)
}

// freshPool returns the pool of key, made on first use; tick says its
// calls count no fuel, so that it keeps instances with the tick check once
// the module has one (see put).
func (m *Module) freshPool(key string, tick bool) *freshPool {
	if fresh := m.fresh.Load(); fresh != nil {
		if fp, ok := (*fresh)[key]; ok {
			return fp
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var pools map[string]*freshPool
	if fresh := m.fresh.Load(); fresh != nil {
		pools = *fresh
	}
	if fp, ok := pools[key]; ok {
		return fp
	}
	if len(pools) >= maxStates && (m.h.budget == nil || len(pools) >= maxBudgetedStates) {
		return nil
	}
	fp := &freshPool{b: m.h.budget, tick: tick, idle: newIdleSet(maxIdle(m.h.budget), m.h.budget)}
	pools = maps.Clone(pools)
	if pools == nil {
		pools = map[string]*freshPool{}
	}
	pools[key] = fp
	m.fresh.Store(&pools)
	return fp
}

// get takes an idle instance, or returns nil when none is.
func (fp *freshPool) get() *instance { return fp.idle.get() }

// current returns the pool's snapshot, or nil before one was taken.
func (fp *freshPool) current() *snapshot { return fp.snap.Load() }

// take records the state of a just-initialised instance, once per pool.
// With mapped memory the instance's memory is bound to the new image at
// once, so that it, too, is reset page by page. An error means the
// instance must not run.
func (fp *freshPool) take(in *instance) error {
	fp.mu.Lock()
	snap, warm := fp.snap.Load(), fp.coldReason == nil
	fp.mu.Unlock()
	if snap != nil {
		// Another instance was first: this one starts from its snapshot
		// too (which may hold warm-up state), as every call does.
		if err := in.adopt(snap); err != nil {
			return fmt.Errorf("restoring the pool's snapshot after initialising: %v", err)
		}
		return nil
	}
	if warm && len(in.m.warmup) > 0 {
		// Outside the lock: the guest runs.
		if err := in.warmUp(); err != nil {
			fp.mu.Lock()
			fp.coldReason = err
			fp.mu.Unlock()
			return fmt.Errorf("%w: %v", errWarmup, err)
		}
	}
	fp.mu.Lock()
	var victims []*heldNode
	defer func() {
		fp.mu.Unlock()
		fp.b.release(victims)
	}()
	if fp.snap.Load() != nil {
		return nil
	}
	s := &snapshot{}
	if mem := in.memory(); mem != nil {
		buf, _ := mem.Read(0, mem.Size())
		if mm := in.alloc.mem; mm != nil {
			img, err := newMemImage(buf)
			if err == nil {
				if err := mm.bind(img); err != nil {
					return err
				}
				s.img = img
			}
		}
		if s.img == nil {
			s.mem = append([]byte(nil), buf...)
		}
	}
	for _, g := range in.globals() {
		s.globals = append(s.globals, g.Get())
	}
	// Complete before it is published: put reads it without a lock.
	s.held.owner, s.held.snap = fp, s
	fp.snap.Store(s)
	if fp.b != nil {
		victims = fp.b.charge(&s.held, int64(s.memSize()), nil)
	}
	return nil
}

// warmUp runs the module's warm-up calls in the instance, still counted as
// its initialisation, with nothing of the call it was made for: no tool
// dispatcher, service provider, log sink, config values or network; then
// drops what they left outside linear memory and globals (output, logs,
// vars, the last HTTP response). It fails when a call fails or changes the
// WASI descriptor table.
func (in *instance) warmUp() error {
	tools, services, onLog, hosts, config := in.tools, in.services, in.onLog, in.grant.AllowedHosts, in.grant.Config
	in.tools, in.services, in.onLog, in.grant.AllowedHosts, in.grant.Config = nil, nil, nil, nil, nil
	// Counted, and capped, as initialisation.
	in.initializing = true
	defer func() {
		if in.budget != nil {
			in.bookFuel()
		}
		in.initializing = false
		in.tools, in.services, in.onLog, in.grant.AllowedHosts, in.grant.Config = tools, services, onLog, hosts, config
		in.kernel.reset()
		in.logs, in.logBytes, in.logsTruncated = nil, 0, false
		in.vars, in.varBytes = nil, 0
		in.httpStatus, in.httpHeaders = 0, nil
	}()
	ctx := context.WithValue(in.ctx, instKey{}, in)
	for _, w := range in.m.warmup {
		in.kernel.reset()
		if err := in.kernel.setInput(w.Input); err != nil {
			return err
		}
		out, err := in.mod.ExportedFunction(w.Export).Call(ctx)
		if err != nil {
			return fmt.Errorf("%s: %v", w.Export, firstLine(err.Error()))
		}
		var rc int32
		if len(out) == 1 {
			rc = int32(uint32(out[0]))
		}
		if rc != 0 || in.kernel.errorOff != 0 {
			return fmt.Errorf("%s failed (code %d)", w.Export, rc)
		}
		if in.fds.changed() {
			return fmt.Errorf("%s changed the WASI descriptor table", w.Export)
		}
	}
	return nil
}

// adopt gives a new instance the snapshot's state in place of running
// its initialisers, which did it once for all of the pool's instances.
func (in *instance) adopt(s *snapshot) error {
	// Initialisers usually grow the memory; the new instance's is grown
	// to the snapshot's size first.
	if mem := in.memory(); mem != nil && int(mem.Size()) < s.memSize() {
		if _, ok := mem.Grow(uint32((s.memSize() - int(mem.Size())) / pageSize)); !ok {
			return errGrown
		}
	}
	if err := in.restore(s); err != nil {
		return err
	}
	in.initialized, in.initializing = true, false
	return nil
}

// put restores in to the snapshot and keeps it for the next call; it
// reports false when in cannot be restored and must be closed.
func (fp *freshPool) put(in *instance) bool {
	snap := fp.snap.Load()
	if snap == nil || in.uses >= maxReuse {
		return false
	}
	if in.retires(!fp.tick) {
		return false
	}
	if mm := in.alloc.mem; mm != nil && mm.img != nil && mm.img != snap.img {
		// Bound to a snapshot the pool has since dropped: restoring it
		// from this one would copy the whole memory.
		return false
	}
	if err := in.restore(snap); err != nil {
		return false
	}
	// Kept only while the snapshot is the pool's, checked under the
	// shard's lock, which release takes after dropping the snapshot. The
	// snapshot goes behind the instance in the budget: it is released
	// only after its pool's idle instances.
	return fp.idle.put(in, func() bool { return fp.snap.Load() == snap }, in.heldNode(fp), &snap.held)
}

// maxIdle is how many idle instances a fresh-state pool keeps: without a
// memory budget, twice the processors; with one, which bounds what every
// pool holds together, as many as calls left (up to maxBudgetedIdle), so
// that many concurrent callers of one tool do not each instantiate afresh.
func maxIdle(b *memBudget) int {
	if b != nil {
		return maxBudgetedIdle
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// release closes an idle instance the memory budget evicted, or drops the
// pool's snapshot with the instances restored from it.
func (fp *freshPool) release(n *heldNode) {
	if n.in != nil {
		if fp.idle.remove(n.in) {
			n.in.close()
		}
		return
	}
	fp.mu.Lock()
	dropped := fp.snap.CompareAndSwap(n.snap, nil)
	fp.mu.Unlock()
	fp.b.forget(n)
	if dropped {
		for _, in := range fp.idle.drain() {
			in.close()
		}
	}
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
// host keeps per instance. Mapped memory bound to the snapshot's image
// drops the pages the call wrote; other memory is copied back whole.
func (in *instance) restore(s *snapshot) error {
	if mem := in.memory(); mem != nil {
		if mem.Size() != uint32(s.memSize()) {
			return errGrown
		}
		buf, ok := mem.Read(0, mem.Size())
		if !ok {
			return errGrown
		}
		mm := in.alloc.mem
		var err error
		switch {
		case s.img != nil && mm != nil && mm.img == s.img:
			err = mm.reset()
		case s.img != nil && mm != nil && mm.img == nil:
			err = mm.bind(s.img)
		case s.img != nil:
			err = s.img.readInto(buf)
		default:
			copy(buf, s.mem)
		}
		if err != nil {
			return err
		}
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
