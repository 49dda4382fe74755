package host

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillhost/skillhost/abi"
)

// Module is a compiled guest module. It is safe for concurrent use, and
// every Call starts from fresh state: nothing one call writes (linear
// memory, globals, vars, kernel memory, WASI descriptors) is visible to
// the next. Calls are served by pooled instances, one call at a time each,
// restored after every call from a snapshot taken after the guest's
// initialisation; a module whose state a snapshot cannot hold gets a new
// instance per call (see Call). For trusted modules that keep state
// between calls, see NewPool.
type Module struct {
	h    *Host
	name string
	sum  [32]byte
	c    *compiled

	// warmup runs before a fresh-state snapshot is taken (see
	// LoadOptions.Warmup).
	warmup []WarmupCall
	// once is LoadOptions.Once: calls take no snapshot, and their
	// instances may run the initialisers with the tick check.
	once bool

	// fresh holds the restorable instances by profile. Calls read it
	// without a lock; a new profile's pool replaces the map with a copy,
	// under mu.
	mu    sync.Mutex
	fresh atomic.Pointer[map[string]*freshPool]

	// tools holds the exports found callable: checking them again
	// allocates (wazero builds the type lists on each request).
	tools sync.Map
}

// Name returns the name the module was loaded under.
func (m *Module) Name() string { return m.name }

// SHA256 returns the hex digest of the module's bytes.
func (m *Module) SHA256() string { return hex.EncodeToString(m.sum[:]) }

// Metered reports whether the module counts fuel, and if not, why.
func (m *Module) Metered() (bool, error) { return m.c.metered, m.c.unmetered }

// Exports returns the names of the functions a caller may call: exports of
// type () -> i32 or () -> (), sorted, without the initialisers.
func (m *Module) Exports() []string {
	var names []string
	for name := range m.c.exports {
		if m.callable(name) == nil && !isInit(m.c.init, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func isInit(init []string, name string) bool {
	for _, n := range init {
		if n == name {
			return true
		}
	}
	return false
}

// callable reports why export cannot be called, or nil.
func (m *Module) callable(export string) error {
	if _, ok := m.tools.Load(export); ok {
		return nil
	}
	d, ok := m.c.exports[export]
	if !ok {
		return fmt.Errorf("%w: %s has no export %q", ErrExportNotFound, m.name, export)
	}
	if len(d.ParamTypes()) != 0 || len(d.ResultTypes()) > 1 || (len(d.ResultTypes()) == 1 && d.ResultTypes()[0] != i32) {
		return fmt.Errorf("%w: %s export %q has type %s; tools are () -> i32", ErrExportNotFound, m.name, export, signature(d))
	}
	m.tools.Store(export, struct{}{})
	return nil
}

// CallOptions are the per-call settings of Module.Call.
type CallOptions struct {
	// Grant is the effective grant (already intersected with the operator's)
	// the call runs under. Zero limits take the host's defaults.
	Grant Grant
	// Tools serves tool_call; nil answers every tool_call with an error.
	Tools ToolDispatcher
	// Services serves capability_call; nil answers with an error.
	Services ServiceProvider
	// OnLog, when set, receives each guest log entry as it is written, in
	// addition to Result.Logs.
	OnLog func(LogEntry)
	// Group names whom the call is for, such as a tenant: while guests of
	// more than one group run and the processors are all taken, a group's
	// metered guests are held to an equal share of them (a guest past its
	// group's share waits at its next fuel slice). Calls with no group
	// form a group of their own. Groups are kept for the host's life: use
	// a bounded set of names.
	Group string
	// CountFuel counts the fuel of a call without a fuel limit on a host
	// with the tick check (Config.WithTickCheck), for accounting (a
	// tenant's fuel quota): such a call then checks a budget at every loop
	// head and function entry, as one with a limit does (see Result.Fuel).
	CountFuel bool

	// command, set by RunCommand, gives the instance a command's argv,
	// stdin, stdout and stderr.
	command *commandIO
}

// LogEntry is one guest log message or stdout/stderr write.
type LogEntry struct {
	Level abi.LogLevel `json:"level"`
	// Source is "log" for the log_* functions, "stdout" or "stderr".
	Source  string `json:"source"`
	Message string `json:"message"`
}

// Result is what a call produced. It is returned, with the logs, also when
// the call failed.
type Result struct {
	// Output holds the bytes the guest passed to output_set (nil on error).
	Output []byte
	// ReturnCode is the export's i32 result, or the WASI exit code.
	ReturnCode int32
	Logs       []LogEntry
	// LogsTruncated is set when the guest wrote more than MaxLogBytes.
	LogsTruncated bool
	Duration      time.Duration
	// Instantiate is the part of Duration spent giving the call its
	// instance: instantiating the module (its start function included) and
	// running its initialisers, or restoring a snapshot; Execute is the
	// part spent in the export.
	Instantiate time.Duration
	Execute     time.Duration
	// Fuel is the instructions the call ran (the guest's initialisation not
	// included), counted the same on any machine, when FuelCounted is set.
	// Fuel is counted for every call of a metered module (Module.Metered)
	// but, with Config.WithTickCheck (the default) on Linux, those without
	// a fuel limit (Limits.MaxFuel) nor CallOptions.CountFuel: these check
	// their deadline with a flag the host changes every 2 ms instead, and
	// count nothing; Fuel is then 0 and FuelCounted false, as for
	// unmetered modules. Such a call still counts when its instance ran
	// the module's initialisers (a fresh-state pool's first), or before
	// the module with the tick check is made.
	Fuel        int64
	FuelCounted bool
}

// countsFuel reports whether a call under limits and opts counts fuel, and
// so runs the module rewritten with the budget rather than the tick check.
func countsFuel(limits Limits, opts *CallOptions) bool {
	return limits.MaxFuel > 0 || opts.CountFuel
}

// Call runs export with input as the Extism input and returns its output,
// from fresh state. For a module whose state a snapshot holds (metered,
// with only numeric mutable globals and no writes outside its memory), the
// call runs in a pooled instance of its grant's profile (mounts, env, memory
// cap), restored to the snapshot taken after the guest's initialisation
// (and its warm-up calls, LoadOptions.Warmup) once the previous call ended,
// or in a new instance that adopts that snapshot; any other module, or one
// loaded with LoadOptions.Once, runs in a new instance that runs its
// initialisers. A failure of the guest (error_set, a non-zero code, a
// trap, a timeout, a limit, a denied capability) is a *CallError that
// matches the sentinels with errors.Is; the Result is always non-nil.
func (m *Module) Call(ctx context.Context, export string, input []byte, opts *CallOptions) (*Result, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	if m.runsInWorker(opts.Grant) {
		return m.callInWorker(ctx, export, input, opts)
	}
	start := time.Now()
	res := &Result{}
	if !m.h.enter() {
		return res, ErrClosed
	}
	defer m.h.leave()
	if err := m.callable(export); err != nil {
		return res, err
	}
	// The deadline starts before instantiation: a start function runs
	// under it.
	limits := m.h.cfg.resolve(opts.Grant.Limits)
	counts := countsFuel(limits, opts)
	ctx, cancel := context.WithTimeout(ctx, limits.Timeout)
	defer cancel()
	var fp *freshPool
	if m.c.snapshottable() && !m.once {
		key := profile(opts.Grant, limits)
		if counts {
			key += "F" // instances of the module that counts fuel
		}
		fp = m.freshPool(key, !counts)
	}
	var in *instance
	if fp != nil {
		in = fp.get()
	}
	if in == nil {
		var snap *snapshot
		if fp != nil {
			snap = fp.current()
		}
		// Only an instance that adopts a snapshot may run the tick check:
		// one that runs the initialisers counts their fuel, under the
		// host's initialisation cap, unless the module was loaded for
		// one call (LoadOptions.Once).
		var err error
		if in, err = m.newInstance(ctx, opts.Grant, opts, snap != nil || m.once); err != nil {
			res.Instantiate = time.Since(start)
			res.Duration = res.Instantiate
			return res, err
		}
		if fp != nil {
			if snap == nil {
				// Taken while this instance was made.
				snap = fp.current()
			}
			if snap != nil {
				// The pool's snapshot stands for the initialisers.
				if err := in.adopt(snap); err != nil {
					in.close()
					res.Instantiate = time.Since(start)
					res.Duration = res.Instantiate
					return res, &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
						Message: fmt.Sprintf("restoring a new instance from the snapshot: %v", err), Cause: errInternal}
				}
			} else {
				in.onInit = fp.take
				if len(m.warmup) > 0 && fp.warm() {
					// Initialised here rather than in the call, so that a
					// failed warm-up costs this instance, not the call.
					in.reset(opts.Grant, opts)
					err := in.initialize(context.WithValue(ctx, instKey{}, in))
					if errors.Is(err, errWarmup) {
						in.close()
						if in, err = m.newInstance(ctx, opts.Grant, opts, false); err == nil {
							in.onInit = fp.take
						}
					}
					if err != nil {
						if in != nil {
							in.close()
						}
						res.Instantiate = time.Since(start)
						res.Duration = res.Instantiate
						return res, err
					}
				}
			}
		}
	} else {
		in.reset(opts.Grant, opts)
	}
	res.Instantiate = time.Since(start)
	err := in.call(ctx, export, input, res)
	m.c.noteFuel(m.h, res, counts)
	// Restoring the instance for the next call (or closing it) is part of
	// giving calls their instances.
	t0 := time.Now()
	if fp == nil || (err != nil && !errors.Is(err, ErrGuest)) || !in.reusable() || !fp.put(in) {
		in.close()
	}
	res.Instantiate += time.Since(t0)
	res.Duration = time.Since(start)
	return res, err
}

// Describe calls the module's describe export, which guests built with the
// skillhost SDKs provide, and returns the tools it declares.
func (m *Module) Describe(ctx context.Context) (*abi.Description, error) {
	if _, ok := m.c.exports[abi.ExportDescribe]; !ok {
		return nil, fmt.Errorf("%w: %s has no %q export", ErrExportNotFound, m.name, abi.ExportDescribe)
	}
	res, err := m.Call(ctx, abi.ExportDescribe, nil, nil)
	if err != nil {
		return nil, err
	}
	var d abi.Description
	if err := json.Unmarshal(res.Output, &d); err != nil {
		return nil, fmt.Errorf("%w: %s: describe returned invalid JSON: %v", ErrInvalidModule, m.name, err)
	}
	return &d, nil
}
