package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// Host runs guest modules. It owns the wazero runtimes (one for metered
// modules, one with close-on-context-done for those that are not metered,
// one that only validates), the compilation cache, and the compiled modules
// by content hash.
//
// A Host is safe for concurrent use.
type Host struct {
	cfg Config
	// rt runs metered modules: rewritten to check a budget at every loop
	// head and function entry, they need no help from the runtime to stop.
	rt wazero.Runtime
	// rtSafe runs the modules that are not metered (Module.Metered), with
	// wazero's close-on-context-done.
	rtSafe wazero.Runtime
	// rtCheck only validates: every module is compiled by wazero's
	// interpreter before anything else is done with it.
	rtCheck wazero.Runtime
	cache   wazero.CompilationCache

	// provided maps "module\x00name" to the signature of every function
	// the host offers a guest.
	provided map[string]api.FunctionDefinition

	mu       sync.Mutex
	compiled map[[32]byte]*compiled
	egress   sync.Map // policy key -> *egress.Client

	closed atomic.Bool
	// inflight counts the calls running in the host's runtimes: Close
	// waits for them (see enter).
	inflight atomic.Int64
	// compiling counts the modules with the tick check being compiled in
	// the background: the runtimes are released after them.
	compiling atomic.Int64

	// budget bounds the memory held between calls (membudget.go).
	budget *memBudget
	// fair holds groups of calls to fair shares of the processors
	// (fairshare.go).
	fair fairShare
	// tick sets the tick flag that metered calls without a fuel limit
	// check (see ticker); nil when they count fuel like the others, and
	// tickOff then says why.
	tick    *ticker
	tickOff error
	tickMod api.Module

	// workers runs the calls under IsolationProcess.
	workers workerPool
}

// compiled is one module's machine code and what was read from it. It is
// shared by every Module loaded from the same bytes.
type compiled struct {
	cm      wazero.CompiledModule
	info    moduleInfo
	exports map[string]api.FunctionDefinition
	init    []string // exports to run after instantiation, in order

	// metered is set when the module was rewritten to count fuel; budget
	// names its budget global and globals its exported mutable globals.
	metered bool
	budget  string
	globals []rewrite.GlobalExport
	// unmetered says why the module runs without metering, when it does.
	unmetered error
	// tickOnce starts making tickCM, the module rewritten with the tick
	// check for calls without a fuel limit, at the first such call;
	// tickDone is closed when it is made, or when tickErr says why there
	// is none. Calls count fuel until then.
	tickOnce sync.Once
	tickDone chan struct{}
	tickCM   wazero.CompiledModule
	tickErr  error
	// tickMade is set once tickCM is.
	tickMade atomic.Bool
	// cmOnce makes cm: at compile, or at the first call that needs it when
	// the module was loaded with LoadOptions.Once (countingModule), which
	// cmErr then says why it failed.
	cmOnce sync.Once
	cmErr  error
	// writesOutside is set when the code can change a table or a passive
	// segment at run time, which a memory-and-globals snapshot would not
	// undo.
	writesOutside bool
	// wasm holds the module's bytes, for worker processes to load, and sum
	// their digest.
	wasm []byte
	sum  [32]byte
}

// runtime returns the runtime the module was compiled in.
func (c *compiled) runtime(h *Host) wazero.Runtime {
	if c.metered {
		return h.rt
	}
	return h.rtSafe
}

// New returns a Host configured by cfg.
func New(ctx context.Context, cfg Config) (*Host, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rc := wazero.NewRuntimeConfig()
	var cache wazero.CompilationCache
	if cfg.cacheDir != "" {
		if err := os.MkdirAll(cfg.cacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: compilation cache dir: %v", ErrBadConfig, err)
		}
		c, err := wazero.NewCompilationCacheWithDir(cfg.cacheDir)
		if err != nil {
			return nil, fmt.Errorf("%w: compilation cache dir %q: %v", ErrBadConfig, cfg.cacheDir, err)
		}
		cache = c
		rc = rc.WithCompilationCache(c)
	}
	h := &Host{
		cfg:      cfg,
		rt:       wazero.NewRuntimeWithConfig(ctx, rc),
		rtSafe:   wazero.NewRuntimeWithConfig(ctx, rc.WithCloseOnContextDone(true)),
		rtCheck:  wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter()),
		cache:    cache,
		provided: map[string]api.FunctionDefinition{},
		compiled: map[[32]byte]*compiled{},
		budget:   newMemBudget(cfg.memBudget),
	}
	for _, rt := range []wazero.Runtime{h.rt, h.rtSafe} {
		mods, err := instantiateHostModules(ctx, rt)
		if err != nil {
			h.rt.Close(ctx)
			h.rtSafe.Close(ctx)
			h.rtCheck.Close(ctx)
			return nil, err
		}
		for _, m := range mods {
			for name, def := range m.ExportedFunctionDefinitions() {
				h.provided[m.Name()+"\x00"+name] = def
			}
		}
	}
	fuel, err := instantiateFuelModule(ctx, h.rt)
	if err != nil {
		h.rt.Close(ctx)
		h.rtSafe.Close(ctx)
		h.rtCheck.Close(ctx)
		return nil, fmt.Errorf("instantiating %s: %w", rewrite.DefaultImportModule, err)
	}
	for name, def := range fuel.ExportedFunctionDefinitions() {
		h.provided[fuel.Name()+"\x00"+name] = def
	}
	switch {
	case !cfg.tickCheck || !cfg.metering:
		h.tickOff = errors.New("the tick check is off in the host configuration")
	case !tickSupported:
		h.tickOff = errors.New("the tick check needs Linux")
	default:
		h.tickOff = h.startTicker(ctx)
	}
	return h, nil
}

// startTicker instantiates the tick flag's module and makes its ticker.
func (h *Host) startTicker(ctx context.Context) error {
	mod, flag, err := instantiateTickModule(ctx, h.rt)
	if err != nil {
		return fmt.Errorf("instantiating %s: %w", rewrite.TickModule, err)
	}
	t, err := newTicker(flag)
	if err != nil {
		mod.Close(ctx)
		return fmt.Errorf("creating the tick timer: %w", err)
	}
	h.tickMod, h.tick = mod, t
	return nil
}

// instantiateHostModules instantiates what guests import in rt: WASI and
// the extism:host/env and extism:host/user functions.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime) ([]api.Module, error) {
	wasiBuilder := rt.NewHostModuleBuilder(abi.ModuleWASI)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(wasiBuilder)
	if err := wrapBudgetErrnos(ctx, rt, wasiBuilder); err != nil { // see fs.go
		return nil, fmt.Errorf("instantiating WASI: %w", err)
	}
	// The listeners watch the descriptor table (see wasistate.go).
	wasi, err := wasiBuilder.Instantiate(experimental.WithFunctionListenerFactory(ctx, fdWatch{}))
	if err != nil {
		return nil, fmt.Errorf("instantiating WASI: %w", err)
	}
	env, err := instantiateHostModule(ctx, rt, abi.ModuleEnv, envFuncs)
	if err != nil {
		return nil, fmt.Errorf("instantiating %s: %w", abi.ModuleEnv, err)
	}
	user, err := instantiateHostModule(ctx, rt, abi.ModuleUser, userFuncs)
	if err != nil {
		return nil, fmt.Errorf("instantiating %s: %w", abi.ModuleUser, err)
	}
	return []api.Module{wasi, env, user}, nil
}

// Close releases the runtime and every module. New calls fail with
// ErrClosed; calls in flight are ended (a metered guest at its next fuel
// slice or tick, any other at its deadline) and Close waits for them,
// since their machine code and memory go with the runtime. If ctx ends
// first, Close returns its error and the runtime is released once the
// last call has ended. A module with the tick check still being compiled
// in the background (see Module.PrepareTickCheck) is not waited for: the
// runtime is released when its compile ends.
func (h *Host) Close(ctx context.Context) error {
	if h.closed.Swap(true) {
		return nil
	}
	h.workers.close()
	for h.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			go h.releaseWhenIdle()
			return fmt.Errorf("closing the host with calls in flight: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	if h.compiling.Load() > 0 {
		// A module with the tick check is being compiled in the
		// background, which cannot be stopped (a second or more for a Go
		// guest): the runtime is released when it ends, and no call
		// waits for it.
		go h.releaseWhenIdle()
		return nil
	}
	return h.release(ctx)
}

// releaseWhenIdle releases the runtimes once no call runs in them and no
// module is being compiled for them.
func (h *Host) releaseWhenIdle() {
	for h.inflight.Load() > 0 || h.compiling.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
	h.release(context.Background())
}

// enter counts a call in flight; it reports false (and counts nothing)
// once the host is closed.
func (h *Host) enter() bool {
	h.inflight.Add(1)
	if h.closed.Load() {
		h.inflight.Add(-1)
		return false
	}
	return true
}

// leave ends a call counted by enter.
func (h *Host) leave() { h.inflight.Add(-1) }

// release closes the runtimes, once no call runs.
func (h *Host) release(ctx context.Context) error {
	if h.tick != nil {
		h.tick.close()
	}
	err := errors.Join(h.rt.Close(ctx), h.rtSafe.Close(ctx), h.rtCheck.Close(ctx))
	if h.cache != nil {
		if cerr := h.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

// Config returns the host's configuration.
func (h *Host) Config() Config { return h.cfg }

// LoadOptions says how to load a module.
type LoadOptions struct {
	// Name identifies the module in errors and logs, e.g. "text.wasm".
	Name string
	// SHA256 is an optional hex pin; a module whose digest differs is
	// refused with ErrHashMismatch.
	SHA256 string
	// Warmup lists calls that prepare the state fresh-state calls start
	// from: they run once, in order, in the instance the snapshot is taken
	// from, after the initialisers, so that what a guest builds lazily on
	// its first calls (tables, caches, the runtime's allocator state) is
	// part of the snapshot instead of being rebuilt by every call. Their
	// input must be the module's own (a manifest example), never a
	// caller's: what they leave in memory is seen by every call. Their
	// output, logs, vars and errors are dropped; they cannot call tools,
	// read config values or reach the network, and should not read the
	// clock or random numbers either, which every call would then share.
	// When one fails, the snapshot is taken without warm-up. Pools and
	// modules that are not metered (which get no snapshot) do not run them.
	Warmup []WarmupCall
	// Once loads the module for a process that calls it once, as
	// `skillhost call` does. The host compiles only the module that call
	// runs: with the tick check when the host has one
	// (Config.WithTickCheck), and then the call's instance runs the
	// module's initialisers with it too, bounded by the call's deadline
	// rather than counted under the initialisation cap (as a trusted
	// Pool's and a WASI command's do). A call that counts fuel (a fuel
	// limit, CallOptions.CountFuel) compiles the module that counts it
	// first. Module.Call takes no snapshot: each call initialises an
	// instance of its own. A module already loaded without Once keeps what
	// it was loaded with.
	Once bool
}

// WarmupCall is one call of LoadOptions.Warmup.
type WarmupCall struct {
	Export string
	Input  []byte
}

// Load checks and compiles a module, once per content hash: loading the same
// bytes again returns a Module sharing the compiled code. A module that
// imports anything the host does not provide is refused, naming the import.
func (h *Host) Load(ctx context.Context, wasm []byte, opts LoadOptions) (*Module, error) {
	if h.closed.Load() {
		return nil, ErrClosed
	}
	name := opts.Name
	if name == "" {
		name = "module"
	}
	sum := sha256.Sum256(wasm)
	if opts.SHA256 != "" {
		pin := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(opts.SHA256), "sha256:"))
		if got := hex.EncodeToString(sum[:]); pin != got {
			return nil, fmt.Errorf("%w: %s has sha256 %s, pinned %s", ErrHashMismatch, name, got, pin)
		}
	}
	c, err := h.compile(ctx, name, wasm, sum, opts.Once)
	if err != nil {
		return nil, err
	}
	var warmup []WarmupCall
	for _, w := range opts.Warmup {
		if err := (&Module{h: h, name: name, c: c}).callable(w.Export); err != nil {
			return nil, fmt.Errorf("warm-up call: %w", err)
		}
		warmup = append(warmup, WarmupCall{Export: w.Export, Input: bytes.Clone(w.Input)})
	}
	return &Module{h: h, name: name, sum: sum, c: c, warmup: warmup, once: opts.Once}, nil
}

// compile checks and compiles wasm, whose digest is sum: the module that
// counts fuel or, with once and a host that may run the tick check, the
// module with the tick check alone (see LoadOptions.Once).
func (h *Host) compile(ctx context.Context, name string, wasm []byte, sum [32]byte, once bool) (*compiled, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.compiled[sum]; ok {
		return c, nil
	}
	info, err := scanModule(wasm)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidModule, name, err)
	}
	for _, imp := range info.imports {
		if imp.kind != 0 {
			return nil, fmt.Errorf("%w: %s imports %s; the host provides only functions", ErrUnknownImport, name, imp)
		}
		if _, ok := h.provided[imp.module+"\x00"+imp.name]; !ok || imp.module == rewrite.DefaultImportModule {
			return nil, fmt.Errorf("%w: %s imports %s, which is not among the %s, %s and %s functions",
				ErrUnknownImport, name, imp, abi.ModuleEnv, abi.ModuleUser, abi.ModuleWASI)
		}
	}
	c := &compiled{info: info, wasm: bytes.Clone(wasm), sum: sum}
	// Tables are bounded first, by rewriting their maximum (see capTables),
	// which reads only the sections' framing and the table section.
	capped, err := capTables(wasm, h.cfg.maxTableElem)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidModule, name, err)
	}
	// The rewriter then checks what wazero would trust: counts and lengths
	// that claim more than the bytes behind them (wazero allocates by them
	// before checking them) and references to types that do not exist
	// (wazero panics). A module it finds malformed is refused before wazero
	// sees it.
	tick := once && h.cfg.metering && h.tickAllowed()
	out, ri, rerr := h.instrumentCached(capped, sum, tick)
	// So is one whose scan an encoding the rewriter does not know (none
	// of which wazero supports either) stopped before every section was
	// checked.
	if errors.Is(rerr, rewrite.ErrMalformed) || errors.Is(rerr, rewrite.ErrUnchecked) {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidModule, name, rerr)
	}
	// Then the original module is validated in full, as wazero would: a
	// module that is not valid WebAssembly is never rewritten or run, so
	// nothing the rewriter adds (the budget global, the refuel import) can
	// be named by the original code, whose indices all lie below them.
	if err := h.validate(ctx, wasm, sum); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidModule, name, err)
	}
	switch {
	case rerr == nil && tick:
		// The module with the tick check alone; the one that counts fuel
		// is made if a call needs it (countingModule). Should this one
		// not compile, the one that counts fuel is made now.
		cm, err := compileSafely(ctx, h.rt, out)
		if err == nil {
			c.tickOnce.Do(func() {
				c.tickDone = make(chan struct{})
				close(c.tickDone)
			})
			c.tickCM, c.metered, c.globals, c.writesOutside = cm, true, ri.Globals, ri.WritesOutsideMemory
			c.tickMade.Store(true)
			break
		}
		if out, ri, rerr = h.instrumentCached(capped, sum, false); rerr != nil {
			c.unmetered = rerr
			break
		}
		fallthrough
	case rerr == nil && h.cfg.metering:
		// wazero validates the rewritten module again as it compiles it
		// (also when the machine code comes from the cache). Should the
		// rewriter ever produce an invalid module from a valid one, the
		// module runs unmetered rather than not at all.
		cm, err := compileSafely(ctx, h.rt, out)
		if err != nil {
			c.unmetered = fmt.Errorf("the rewritten module did not compile: %v", err)
			break
		}
		c.cmOnce.Do(func() { c.cm, c.budget = cm, ri.BudgetExport })
		c.metered, c.globals = true, ri.Globals
		c.writesOutside = ri.WritesOutsideMemory
	case rerr != nil:
		c.unmetered = rerr
	default:
		c.unmetered = errors.New("metering is off in the host configuration")
	}
	if !c.metered {
		cm, err := compileSafely(ctx, h.rtSafe, capped)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidModule, name, err)
		}
		c.cmOnce.Do(func() { c.cm = cm })
	}
	cm := c.cm
	if cm == nil {
		cm = c.tickCM
	}
	for _, def := range cm.ImportedFunctions() {
		mod, fn, _ := def.Import()
		want := h.provided[mod+"\x00"+fn]
		if !sameSignature(def, want) {
			cm.Close(ctx)
			return nil, fmt.Errorf("%w: %s imports function %s.%s as %s, but the host provides %s",
				ErrUnknownImport, name, mod, fn, signature(def), signature(want))
		}
	}
	c.exports = map[string]api.FunctionDefinition{}
	for name, def := range cm.ExportedFunctions() {
		if !strings.HasPrefix(name, "__skillhost_") || !c.metered {
			c.exports[name] = def
		}
	}
	c.init = initExports(c.exports)
	h.compiled[sum] = c
	return c, nil
}

// countingModule returns the module that counts fuel (or, for a module
// that is not metered, the module as it is), making it first when the
// module was loaded with LoadOptions.Once.
func (c *compiled) countingModule(h *Host) (wazero.CompiledModule, error) {
	c.cmOnce.Do(func() {
		cm, ri, err := c.remake(h, false)
		if err != nil {
			c.cmErr = err
			return
		}
		c.cm, c.budget = cm, ri.BudgetExport
	})
	if c.cmErr != nil {
		return nil, fmt.Errorf("%w: making the module that counts fuel: %v", ErrInvalidModule, c.cmErr)
	}
	return c.cm, nil
}

// remake rewrites the module after it was loaded, to count fuel or with
// the tick check, and compiles the result, outside any call's context:
// what is made serves later calls.
func (c *compiled) remake(h *Host, tick bool) (wazero.CompiledModule, rewrite.Info, error) {
	capped, err := capTables(c.wasm, h.cfg.maxTableElem)
	if err != nil {
		return nil, rewrite.Info{}, err
	}
	out, ri, err := h.instrumentCached(capped, c.sum, tick)
	if err != nil {
		return nil, ri, err
	}
	cm, err := compileSafely(context.Background(), h.rt, out)
	if err != nil {
		what := "to count fuel"
		if tick {
			what = "with the tick check"
		}
		return nil, ri, fmt.Errorf("the module rewritten %s did not compile: %v", what, err)
	}
	return cm, ri, nil
}

// tickModule returns the module rewritten with the tick check, or nil when
// a call without a fuel limit is to count fuel: the host has no ticker,
// the module cannot be so rewritten or compiled (tickErr says why), or it
// is not ready yet. The first caller starts making it in the background
// (a rewrite and a compilation: about as long as loading the module, a
// second or more for a Go guest), so that no call waits for it nor spends
// its deadline on it; until it is ready, calls count fuel. Calls ask for
// it only once one of them has run long (noteFuel): short calls gain
// nothing from the tick check, and the module's machine code is then kept
// twice.
func (c *compiled) tickModule(h *Host) wazero.CompiledModule {
	if !c.metered || !h.tickAllowed() {
		return nil
	}
	c.tickOnce.Do(func() {
		c.tickDone = make(chan struct{})
		go c.makeTickModule(h)
	})
	select {
	case <-c.tickDone:
		return c.tickCM
	default:
		return nil
	}
}

// PrepareTickCheck makes the module rewritten with the tick check
// (Config.WithTickCheck), which calls without a fuel limit run, and waits
// for it, instead of leaving it to be made in the background once such a
// call has run more than 50 million instructions (calls count fuel until
// it is ready): a process whose calls compute long pays for it here,
// before it serves. It does nothing on a host
// without the tick check or for a module that is not metered; a module
// that cannot be so rewritten or compiled keeps counting fuel.
func (m *Module) PrepareTickCheck() { m.c.waitTick(m.h) }

// waitTick makes the module with the tick check, or waits for it, when
// the host has a tick check.
func (c *compiled) waitTick(h *Host) {
	if c.tickModule(h) == nil && c.tickDone != nil {
		<-c.tickDone
	}
}

// tickAfterFuel is how many instructions a call without a fuel limit must
// count before its module gets the module with the tick check: about
// 20-50 ms of a Go guest's compute. A tool whose calls are shorter keeps
// counting fuel, which costs it about as much as the tick check would
// (measured on slugify, see RATIONALE.md), and the host does not keep its
// machine code twice (about 20 MB for a Go guest).
const tickAfterFuel = 50_000_000

// noteFuel starts making the module with the tick check once a call that
// could have run it (counts reports whether the call had to count fuel)
// counted more than tickAfterFuel instructions.
func (c *compiled) noteFuel(h *Host, res *Result, counts bool) {
	if !counts && res.FuelCounted && res.Fuel > tickAfterFuel {
		c.tickModule(h)
	}
}

// retires reports whether in, put back after a call that counted fuel or
// not (counts), is to be closed rather than kept: it counts fuel, the
// calls it would serve need not, and the module with the tick check is
// ready for them.
func (in *instance) retires(counts bool) bool {
	return !counts && !in.ticked && in.m.c.tickReady(in.m.h)
}

// tickReady reports whether the module rewritten with the tick check is
// made, without starting it.
//
// With one processor it reports false, as tickModule returns nil: a pool
// keeps the instances that count fuel.
func (c *compiled) tickReady(h *Host) bool { return c.tickMade.Load() && h.tickAllowed() }

// tickAllowed reports whether calls may run the tick check now: the host
// has a ticker, on a thread of its own or with more than one processor
// for the Go scheduler. With one, a ticker goroutine's blocking read holds
// the processor after every tick until the runtime's monitor takes it
// back, up to milliseconds later when it has backed off, and the guest
// waits that long: a 60 µs call of a Go tool took twice as long as
// counting its fuel (see RATIONALE.md).
func (h *Host) tickAllowed() bool {
	return h.tick != nil && (h.tick.ownThread() || runtime.GOMAXPROCS(0) > 1)
}

// makeTickModule makes tickCM and closes tickDone.
func (c *compiled) makeTickModule(h *Host) {
	defer close(c.tickDone)
	h.compiling.Add(1)
	defer h.compiling.Add(-1)
	if h.closed.Load() {
		c.tickErr = ErrClosed
		return
	}
	cm, _, err := c.remake(h, true)
	if err != nil {
		c.tickErr = err
		return
	}
	c.tickCM = cm
	c.tickMade.Store(true)
}

// validate checks that wasm is a valid module under the features the host
// runs, as wazero's compiler would before compiling it. It compiles the
// module with wazero's interpreter, whose decoder and validator are the
// compiler's, at a fraction of the compiler's cost (0.15-0.3 s for a Go
// guest). With an on-disk cache a module that passed is remembered there by
// its digest, so a process pays this once per module, like compilation.
func (h *Host) validate(ctx context.Context, wasm []byte, sum [32]byte) error {
	marker := ""
	if h.cfg.cacheDir != "" {
		marker = filepath.Join(h.cfg.cacheDir, "valid", hex.EncodeToString(sum[:]))
		if _, err := os.Stat(marker); err == nil {
			return nil
		}
	}
	cm, err := compileSafely(ctx, h.rtCheck, wasm)
	if err != nil {
		return err
	}
	cm.Close(ctx)
	if marker != "" {
		if err := os.MkdirAll(filepath.Dir(marker), 0o755); err == nil {
			os.WriteFile(marker, nil, 0o644)
		}
	}
	return nil
}

// initExports returns the exports to run once per instance before any
// other, following the conventions Extism hosts use: a WASI reactor's
// _initialize (else a command's __wasm_call_ctors), then hs_init for
// Haskell guests.
func initExports(exports map[string]api.FunctionDefinition) []string {
	var init []string
	noArgs := func(name string) bool {
		d, ok := exports[name]
		return ok && len(d.ParamTypes()) == 0 && len(d.ResultTypes()) == 0
	}
	switch {
	case noArgs(abi.ExportInitialize):
		init = append(init, abi.ExportInitialize)
	case noArgs("__wasm_call_ctors"):
		init = append(init, "__wasm_call_ctors")
	}
	if d, ok := exports["hs_init"]; ok && len(d.ParamTypes()) == 2 {
		init = append(init, "hs_init")
	}
	return init
}

func sameSignature(a, b api.FunctionDefinition) bool {
	if a == nil || b == nil {
		return false
	}
	return equalTypes(a.ParamTypes(), b.ParamTypes()) && equalTypes(a.ResultTypes(), b.ResultTypes())
}

func equalTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func signature(d api.FunctionDefinition) string {
	if d == nil {
		return "nothing"
	}
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return "(" + names(d.ParamTypes()) + ") -> (" + names(d.ResultTypes()) + ")"
}

// instrument rewrites a module for metering: counting fuel, or with the
// tick check when tick is set. A panic in the rewriter (a bug, reached by a
// module nobody foresaw) is turned into an error, so the module runs
// unmetered instead of taking the process down.
func instrument(wasm []byte, tick bool) (out []byte, info rewrite.Info, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rewriter failed: %v", p)
		}
	}()
	return rewrite.Instrument(wasm, rewriteOptions(tick))
}

// rewriteOptions are the options instrument rewrites with.
func rewriteOptions(tick bool) rewrite.Options {
	return rewrite.Options{ExportGlobals: true, Tick: tick}
}

// compileSafely compiles wasm, turning a panic inside wazero into an error.
func compileSafely(ctx context.Context, rt wazero.Runtime, wasm []byte) (cm wazero.CompiledModule, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("compiler failed: %v", p)
		}
	}()
	return rt.CompileModule(ctx, wasm)
}
