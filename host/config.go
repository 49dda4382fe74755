package host

import (
	"fmt"
	"math"
	"time"

	"github.com/skillhost/skillhost/abi"
)

// Default limits, used where neither the manifest nor the operator set one.
const (
	DefaultTimeout              = 30 * time.Second
	DefaultMaxMemoryBytes       = 256 << 20
	DefaultMaxOutputBytes       = 16 << 20
	DefaultMaxLogBytes          = 1 << 20
	DefaultMaxVarBytes          = 1 << 20
	DefaultMaxHTTPResponseBytes = 16 << 20
	DefaultMaxKernelBytes       = 64 << 20
	DefaultMaxToolDepth         = 8
	DefaultMaxWriteBytes        = 64 << 20
	DefaultMaxOpenFiles         = 64
	// DefaultMaxTableElements bounds the elements a module's tables may
	// hold together (each costs the host 8 bytes): 8 MiB of host memory.
	// Go guests declare about 7,000.
	DefaultMaxTableElements = 1 << 20
	// DefaultMaxInitFuel caps the instructions a metered module's start
	// function and initialisers may run: the Go guests here start up in
	// 0.8 to 19 million.
	DefaultMaxInitFuel = 1_000_000_000
)

// Config configures a Host. It is an immutable value: each WithXxx method
// returns a changed copy and never fails; New validates the result.
type Config struct {
	cacheDir     string
	defaults     Limits
	maxToolDepth int
	logLevel     abi.LogLevel
	metering     bool
	tickCheck    bool
	maxTableElem uint64
	maxInitFuel  int64
	memBudget    uint64

	// Worker processes (see IsolationProcess and worker_pool.go).
	isolation   Isolation
	workers     int
	workerGrace time.Duration
	workerCmd   []string
}

// NewConfig returns the default configuration: no on-disk compilation
// cache, the Default* limits, a tool_call depth of DefaultMaxToolDepth and
// guest logs from info up.
func NewConfig() Config {
	return Config{
		defaults: Limits{
			Timeout:              DefaultTimeout,
			MaxMemoryBytes:       DefaultMaxMemoryBytes,
			MaxOutputBytes:       DefaultMaxOutputBytes,
			MaxLogBytes:          DefaultMaxLogBytes,
			MaxVarBytes:          DefaultMaxVarBytes,
			MaxHTTPResponseBytes: DefaultMaxHTTPResponseBytes,
			MaxKernelBytes:       DefaultMaxKernelBytes,
			MaxWriteBytes:        DefaultMaxWriteBytes,
			MaxOpenFiles:         DefaultMaxOpenFiles,
		},
		maxToolDepth: DefaultMaxToolDepth,
		logLevel:     abi.LogInfo,
		metering:     true,
		tickCheck:    true,
		maxTableElem: DefaultMaxTableElements,
		maxInitFuel:  DefaultMaxInitFuel,
		workerGrace:  defaultWorkerGrace,
	}
}

// WithCacheDir keeps compiled machine code in dir (created if missing),
// so a module compiles once per content hash across processes. Without
// it, modules are compiled once per Host, in memory.
func (c Config) WithCacheDir(dir string) Config {
	c.cacheDir = dir
	return c
}

// WithDefaultLimits sets the limits used where a grant leaves a field zero.
// Zero fields of l keep the current defaults.
func (c Config) WithDefaultLimits(l Limits) Config {
	c.defaults = overlay(c.defaults, l)
	return c
}

// WithMaxToolDepth sets how deep tool_call may nest: a guest called at
// depth n may call tools only while n < depth.
func (c Config) WithMaxToolDepth(depth int) Config {
	c.maxToolDepth = depth
	return c
}

// WithLogLevel sets the lowest guest log level kept; get_log_level
// reports it to guests so they can skip formatting the rest.
func (c Config) WithLogLevel(l abi.LogLevel) Config {
	c.logLevel = l
	return c
}

// WithMetering turns the rewriting of modules for fuel metering on (the
// default) or off. A metered module checks a budget at every loop head and
// function entry and reaches the host when it runs out, which stops it at
// its deadline at a few percent of its speed and counts its fuel (see
// WithTickCheck for calls without a fuel limit). Off, every
// module runs under wazero's close-on-context-done, which stops it too but
// costs 3.5-25 times on compute, and max_fuel cannot be enforced.
func (c Config) WithMetering(on bool) Config {
	c.metering = on
	return c
}

// WithTickCheck chooses how metered calls without a fuel limit (nor
// CallOptions.CountFuel) are stopped at their deadline. On (the default,
// on Linux), they compare a flag the host changes every 2 ms with a
// global of their own at loop heads and function entries: two loads and
// a branch. Off, they count fuel like calls with a limit: a counter kept
// in memory, decremented and tested. Measured, the tick check costs less,
// the most on tight loops (a bare WAT loop: 1.6 times raw wazero instead
// of 2.6; the Go integer loop 1.19 instead of 1.48, sort 1.13 instead of
// 1.41), but such calls report no fuel (Result.FuelCounted), their
// deadline is seen up to 2 ms late, and the host spends about 5% of a
// core on the timer while they run. A module gets the tick check once one
// of its calls has counted more than 50 million instructions, or when
// Module.PrepareTickCheck asks: short calls gain nothing from it, and its
// machine code is kept twice (about 20 MB more for a Go guest). Instances
// that run a module's initialisers for Module.Call count fuel under the
// initialisation cap either way (WithMaxInitFuel); see RATIONALE.md.
func (c Config) WithTickCheck(on bool) Config {
	c.tickCheck = on
	return c
}

// WithMaxTableElements sets how many elements the tables of one module may
// hold together, declared and grown (each element costs the host 8 bytes).
// A module declaring more is refused at load; table.grow past it returns
// -1. It is fixed per host because it is compiled into the module.
func (c Config) WithMaxTableElements(n uint64) Config {
	c.maxTableElem = n
	return c
}

// WithMaxInitFuel caps the instructions a metered module's start function
// and initialisers may run when an instance is created (0: no cap but the
// call's deadline, which always applies). A call's own max_fuel counts the
// export alone, so that a call's outcome does not depend on whether its
// instance was new or restored from a snapshot.
func (c Config) WithMaxInitFuel(n int64) Config {
	c.maxInitFuel = n
	return c
}

// WithMemoryBudget bounds the memory the host holds between calls, across
// all its modules and pools: the linear memory of idle warm instances and
// the snapshots fresh-state calls restore from. Past it, the least recently
// used are released (an idle instance closed, a snapshot dropped with the
// instances restored from it) and later calls instantiate afresh. 0, the
// default, sets no budget: each module keeps up to twice GOMAXPROCS idle
// instances for each of up to 16 instantiation profiles. Under a budget a
// module keeps one per concurrent caller (up to 256) for each of up to
// 1,024 profiles, as far as the budget allows. Memory of calls in flight
// is not counted; each call's memory limit bounds it. Worker processes
// (IsolationProcess) each hold within an equal share of it.
func (c Config) WithMemoryBudget(bytes uint64) Config {
	c.memBudget = bytes
	return c
}

// WithIsolation sets where the calls of grants that leave Isolation empty
// run: IsolationInProcess (the default) or IsolationProcess, in supervised
// worker processes. A program using IsolationProcess must call
// ServeWorkerIfChild first thing in main. Pools always run in-process.
func (c Config) WithIsolation(i Isolation) Config {
	c.isolation = i
	return c
}

// WithWorkers sets how many worker processes serve process-isolated calls
// at once, per tool_call nesting depth; 0, the default, is GOMAXPROCS.
// Each worker runs one call at a time; a call waits for a free one.
func (c Config) WithWorkers(n int) Config {
	c.workers = n
	return c
}

// WithWorkerGrace sets how long past a call's deadline its worker process
// may take to answer before it is killed (default 1s; 0 keeps the
// default). A worker stops its guest at the deadline itself; the grace
// only matters when that fails.
func (c Config) WithWorkerGrace(d time.Duration) Config {
	c.workerGrace = d
	return c
}

// WithWorkerCommand sets the program run as a worker process, with its
// arguments; it must call ServeWorkerIfChild first thing. The default runs
// the current executable (os.Executable) again without arguments.
func (c Config) WithWorkerCommand(path string, args ...string) Config {
	c.workerCmd = nil
	if path != "" {
		c.workerCmd = append([]string{path}, args...)
	}
	return c
}

// DefaultLimits returns the limits applied where a grant leaves a field zero.
func (c Config) DefaultLimits() Limits { return c.defaults }

// TickCheck reports whether calls without a fuel limit use the tick check
// (WithTickCheck).
func (c Config) TickCheck() bool { return c.tickCheck }

// MemoryBudget returns the budget of memory held between calls
// (WithMemoryBudget); 0 is none.
func (c Config) MemoryBudget() uint64 { return c.memBudget }

func (c Config) validate() error {
	d := c.defaults
	switch {
	case d.Timeout < 0:
		return fmt.Errorf("%w: default timeout %v is negative", ErrBadConfig, d.Timeout)
	case d.MaxMemoryBytes > 4<<30:
		return fmt.Errorf("%w: default max_memory_bytes %d is above the 4 GiB a 32-bit guest can address", ErrBadConfig, d.MaxMemoryBytes)
	case d.MaxOutputBytes < 0 || d.MaxLogBytes < 0 || d.MaxVarBytes < 0 || d.MaxHTTPResponseBytes < 0 || d.MaxKernelBytes < 0 ||
		d.MaxWriteBytes < 0 || d.MaxOpenFiles < 0:
		return fmt.Errorf("%w: default byte limits must not be negative", ErrBadConfig)
	case d.MaxFuel < 0:
		return fmt.Errorf("%w: default max_fuel %d is negative", ErrBadConfig, d.MaxFuel)
	case c.maxTableElem == 0 || c.maxTableElem > math.MaxUint32:
		return fmt.Errorf("%w: max table elements %d must be between 1 and %d", ErrBadConfig, c.maxTableElem, uint64(math.MaxUint32))
	case c.maxInitFuel < 0:
		return fmt.Errorf("%w: max init fuel %d is negative", ErrBadConfig, c.maxInitFuel)
	case c.maxToolDepth < 0:
		return fmt.Errorf("%w: max tool depth %d is negative", ErrBadConfig, c.maxToolDepth)
	case c.isolation != IsolationDefault && c.isolation != IsolationInProcess && c.isolation != IsolationProcess:
		return fmt.Errorf("%w: isolation %q is not one of %q and %q", ErrBadConfig, c.isolation, IsolationInProcess, IsolationProcess)
	case c.isolation == IsolationProcess && !workersSupported:
		return fmt.Errorf("%w: process isolation needs worker processes, which this system does not support", ErrBadConfig)
	case c.workers < 0:
		return fmt.Errorf("%w: worker count %d is negative", ErrBadConfig, c.workers)
	case c.workerGrace < 0:
		return fmt.Errorf("%w: worker grace %v is negative", ErrBadConfig, c.workerGrace)
	}
	return nil
}

// Resolve returns l with its zero fields filled from the default limits:
// the limits a call under l runs with.
func (c Config) Resolve(l Limits) Limits { return overlay(c.defaults, l) }

func (c Config) resolve(l Limits) Limits { return c.Resolve(l) }

// overlay returns base with every non-zero field of top put over it.
func overlay(base, top Limits) Limits {
	if top.Timeout != 0 {
		base.Timeout = top.Timeout
	}
	if top.MaxMemoryBytes != 0 {
		base.MaxMemoryBytes = top.MaxMemoryBytes
	}
	if top.MaxOutputBytes != 0 {
		base.MaxOutputBytes = top.MaxOutputBytes
	}
	if top.MaxLogBytes != 0 {
		base.MaxLogBytes = top.MaxLogBytes
	}
	if top.MaxVarBytes != 0 {
		base.MaxVarBytes = top.MaxVarBytes
	}
	if top.MaxHTTPResponseBytes != 0 {
		base.MaxHTTPResponseBytes = top.MaxHTTPResponseBytes
	}
	if top.MaxKernelBytes != 0 {
		base.MaxKernelBytes = top.MaxKernelBytes
	}
	if top.MaxFuel != 0 {
		base.MaxFuel = top.MaxFuel
	}
	if top.MaxWriteBytes != 0 {
		base.MaxWriteBytes = top.MaxWriteBytes
	}
	if top.MaxOpenFiles != 0 {
		base.MaxOpenFiles = top.MaxOpenFiles
	}
	return base
}
