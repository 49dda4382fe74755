package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host/internal/egress"
)

// instance is one instantiation of a module with the state its host
// functions use. It serves one call at a time: fresh per call by default,
// reused by a Pool for trusted modules.
type instance struct {
	m      *Module
	mod    api.Module
	grant  Grant
	limits Limits
	alloc  *capAllocator
	closer []io.Closer
	// fsBudget meters the mounts: bytes written per call, files open.
	fsBudget *mountBudget

	tools    ToolDispatcher
	services ServiceProvider
	onLog    func(LogEntry)
	logLevel abi.LogLevel
	depth    int
	maxDepth int

	kernel   *kernel
	vars     map[string][]byte
	varBytes int64

	httpStatus  int32
	httpHeaders map[string]string

	// budget is the metered guest's fuel budget global; fuelGiven is what
	// it was last set to and fuelUsed what the call used so far.
	budget    api.MutableGlobal
	fuelGiven int64
	// ticked is set when the instance runs the module rewritten with the
	// tick check, which counts no fuel (calls without a fuel limit); armed
	// while it counts as a call in flight for the host's ticker.
	ticked       bool
	armed        bool
	fuelUsed     int64
	initializing bool
	// initFuel is what the start function and the initialisers used.
	initFuel int64
	deadline time.Time
	// begun is set from begin to the end of the call, started when
	// begin ran.
	begun   bool
	started time.Time

	// fds watches the WASI descriptor table (see wasistate.go): whether a
	// call changed what the next one would find there.
	fds fdState

	// onInit, when set, runs once right after initialisation (to take the
	// snapshot); uses counts the calls served; mutGlobals caches the
	// exported mutable globals.
	onInit     func(*instance) error
	uses       int
	mutGlobals []api.MutableGlobal
	// held charges the instance to the host's memory budget while idle.
	held heldNode
	// group is the call's CallOptions.Group; share counts the guest in
	// it while it runs an export (see fairShare).
	group string
	share *shareGroup

	// fns caches exported functions: wazero builds a new call engine on
	// every ExportedFunction lookup, which a pooled instance would pay per
	// call.
	fns map[string]api.Function

	// per call
	ctx           context.Context
	logs          []LogEntry
	logBytes      int64
	logsTruncated bool
	initialized   bool
}

// newInstance instantiates the module for a call under g. ctx carries the
// call's deadline: the module's start function, if it has one, runs during
// instantiation, under that deadline and, for a metered module, with its
// fuel counted and capped as the initialisers' (see instance.initialize).
//
// tick allows the module rewritten with the tick check when the call
// counts no fuel and that module is ready (see countsFuel and
// compiled.tickReady); it is not allowed for an instance that will run
// its initialisers for untrusted callers, whose fuel the host's
// initialisation cap bounds.
func (m *Module) newInstance(ctx context.Context, g Grant, opts *CallOptions, tick bool) (in *instance, err error) {
	limits := m.h.cfg.resolve(g.Limits)
	if m.c.info.hasMemory && m.c.info.memMinPages*65536 > limits.MaxMemoryBytes {
		return nil, &CallError{Kind: ErrLimit, Code: abi.CodeLimitExceeded,
			Message: fmt.Sprintf("%s declares %d pages of initial memory, above the %d-byte memory limit", m.name, m.c.info.memMinPages, limits.MaxMemoryBytes)}
	}
	in = &instance{
		m:        m,
		grant:    g,
		limits:   limits,
		alloc:    &capAllocator{limit: limits.MaxMemoryBytes, mapped: mappedSupported && m.c.snapshottable()},
		tools:    opts.Tools,
		services: opts.Services,
		onLog:    opts.OnLog,
		group:    opts.Group,
		logLevel: m.h.cfg.logLevel,
		depth:    CallDepth(ctx),
		maxDepth: m.h.cfg.maxToolDepth,
		kernel:   newKernel(limits.MaxKernelBytes),
		fds:      fdState{first: int32(3 + len(g.Mounts))},
	}
	mc := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(in.nanosleep).
		WithOsyield(runtime.Gosched).
		WithRandSource(rand.Reader)
	if c := opts.command; c != nil {
		// A WASI command (see RunCommand): its own argv, stdin and
		// captured stdout and stderr.
		mc = mc.WithStdin(bytes.NewReader(c.stdin)).WithStdout(c.stdout).WithStderr(c.stderr).WithArgs(c.args...)
	} else {
		mc = mc.WithStdin(bytes.NewReader(nil)).
			WithStdout(logWriter{in, "stdout"}).
			WithStderr(logWriter{in, "stderr"}).
			WithArgs(m.name)
	}
	for k, v := range g.Env {
		mc = mc.WithEnv(k, v)
	}
	in.fsBudget = newMountBudget(limits)
	fsc, closers, err := mountFS(g.Mounts, in.fsBudget)
	if err != nil {
		return nil, err
	}
	in.closer = closers
	mc = mc.WithFSConfig(fsc)

	in.begin(ctx)
	in.initializing = true
	ictx := experimental.WithMemoryAllocator(context.WithValue(ctx, instKey{}, in), in.alloc)
	var cm wazero.CompiledModule
	if tick && !countsFuel(limits, opts) && m.c.tickReady(m.h) {
		// The module with the tick check, made and allowed now.
		cm, in.ticked = m.c.tickCM, true
		in.arm()
	} else if cm, err = m.c.countingModule(m.h); err != nil {
		in.close()
		return nil, err
	}
	mod, err := m.c.runtime(m.h).InstantiateModule(ictx, cm, mc)
	if err != nil {
		in.close()
		if m.h.closed.Load() {
			return nil, ErrClosed
		}
		return nil, in.failure("instantiate", 0, err)
	}
	in.mod = mod
	if m.c.metered && !in.ticked && in.budget == nil {
		g, ok := mod.ExportedGlobal(m.c.budget).(api.MutableGlobal)
		if !ok {
			in.close()
			return nil, &CallError{Kind: ErrTrap, Code: abi.CodeInternal, Message: "metered module has no mutable budget global"}
		}
		in.budget = g
	}
	return in, nil
}

// begin starts a call (or an instantiation) under ctx, which carries its
// deadline: everything the host keeps per call is reset.
func (in *instance) begin(ctx context.Context) {
	in.ctx, in.begun = ctx, true
	in.started = time.Now()
	in.deadline, _ = ctx.Deadline()
	in.depth = CallDepth(ctx)
	in.logs, in.logBytes, in.logsTruncated = nil, 0, false
	in.fuelUsed, in.fuelGiven = 0, 0
	if in.budget != nil {
		in.budget.Set(0)
	}
	in.fsBudget.StartCall(in.limits.MaxWriteBytes, in.limits.MaxOpenFiles)
	in.arm()
}

// arm counts the instance's call in flight for the host's ticker, which
// sets the tick flag only while some are.
func (in *instance) arm() {
	if in.ticked && !in.armed {
		in.m.h.tick.start()
		in.armed = true
	}
}

// disarm ends what arm started.
func (in *instance) disarm() {
	if in.armed {
		in.m.h.tick.stop()
		in.armed = false
	}
}

// reset prepares a restored instance for a call under g: everything but
// what its profile fixed (mounts, env, memory cap) is taken from the call.
func (in *instance) reset(g Grant, opts *CallOptions) {
	in.grant = g
	in.limits = in.m.h.cfg.resolve(g.Limits)
	in.tools, in.services, in.onLog, in.group = opts.Tools, opts.Services, opts.OnLog, opts.Group
}

// reusable reports whether the instance can serve another call: it was
// not closed (a guest's proc_exit closes it) and its WASI descriptor table
// is the one it was created with.
func (in *instance) reusable() bool {
	return in.mod != nil && !in.mod.IsClosed() && !in.fds.changed() && !in.fds.noSnapshot
}

func (in *instance) close() {
	if in.held.registered.Load() {
		in.m.h.budget.forget(&in.held)
	}
	in.disarm()
	if in.mod != nil {
		in.mod.Close(context.Background())
		in.mod = nil
	}
	for _, c := range in.closer {
		c.Close()
	}
	in.closer = nil
}

// call runs one export. ctx must carry the call's deadline (see
// withDeadline). The instance must not be used again after a call that
// returned an error other than ErrGuest, nor when reusable says so.
func (in *instance) call(ctx context.Context, export string, input []byte, res *Result) (err error) {
	if !in.begun {
		// A new instance began its call at instantiation: its start
		// function's logs and fuel belong to this call.
		in.begin(ctx)
	}
	in.kernel.reset()
	defer func() {
		if p := recover(); p != nil {
			// Host code must never panic past a call; report and move on.
			err = &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
				Message: fmt.Sprintf("internal error: %v", p), Cause: fmt.Errorf("%w: %v", errInternal, p)}
		}
		if in.share != nil {
			in.m.h.fair.leave(in.share)
			in.share = nil
		}
		res.Logs, res.LogsTruncated = in.logs, in.logsTruncated
		in.ctx, in.begun = nil, false
		in.disarm()
	}()
	if err := in.kernel.setInput(input); err != nil {
		return in.failure(export, 0, err)
	}
	if in.limits.MaxFuel > 0 && in.ticked {
		return &CallError{Export: export, Kind: ErrBadConfig, Code: abi.CodeInternal,
			Message: fmt.Sprintf("max_fuel needs fuel counted, and this instance of %s was made for calls without a fuel limit", in.m.name)}
	}
	if in.limits.MaxFuel > 0 && in.budget == nil {
		return &CallError{Export: export, Kind: ErrBadConfig, Code: abi.CodeInternal,
			Message: fmt.Sprintf("max_fuel needs a metered module, and %s runs unmetered: %v", in.m.name, in.m.c.unmetered)}
	}
	cctx := context.WithValue(ctx, instKey{}, in)
	if !in.initialized {
		t0 := time.Now()
		err := in.initialize(cctx)
		res.Instantiate += time.Since(t0)
		if err != nil {
			return err
		}
	}
	in.uses++
	if in.budget != nil {
		in.fuelUsed = 0
		in.giveFuel()
	}
	fn, ok := in.fns[export]
	if !ok {
		fn = in.mod.ExportedFunction(export)
		if in.fns == nil {
			in.fns = map[string]api.Function{}
		}
		in.fns[export] = fn
	}
	t0 := time.Now()
	in.share = in.m.h.fair.enter(in.group) // left when the call returns
	out, callErr := fn.Call(cctx)
	res.Execute = time.Since(t0)
	if in.budget != nil {
		in.bookFuel()
		res.Fuel, res.FuelCounted = in.fuelUsed, true
	}
	var rc int32
	if len(out) == 1 {
		rc = int32(uint32(out[0]))
	}
	if callErr != nil {
		var exit *sys.ExitError
		if errors.As(callErr, &exit) && exit.ExitCode() == 0 && ctx.Err() == nil {
			// proc_exit(0) ends the call well but closes the instance.
			callErr = nil
		} else {
			if errors.As(callErr, &exit) && exit.ExitCode() < 256 {
				rc = int32(exit.ExitCode())
			}
			res.ReturnCode = rc
			return in.failure(export, rc, callErr)
		}
	}
	res.ReturnCode = rc
	if ctx.Err() != nil || in.pastDeadline() {
		// The deadline passed while the guest was finishing (the clock
		// is read too: the context's timer fires only when the scheduler
		// gets to it); its result came too late to count.
		err := ctx.Err()
		if err == nil {
			err = context.DeadlineExceeded
		}
		return in.failure(export, rc, err)
	}
	if in.kernel.errorOff != 0 {
		msg, _ := in.kernel.bytes(in.kernel.errorOff)
		ge := abi.ParseError(msg)
		return &CallError{Export: export, Kind: ErrGuest, Code: ge.Code, Message: ge.Message, Guest: ge, ReturnCode: rc}
	}
	if rc != 0 {
		return &CallError{Export: export, Kind: ErrGuest, Code: abi.CodeGuestError, ReturnCode: rc,
			Message: fmt.Sprintf("returned code %d without an error message", rc)}
	}
	if in.kernel.outputLen > 0 {
		span, err := in.kernel.span(in.kernel.outputOff, in.kernel.outputLen)
		if err != nil {
			return in.failure(export, rc, err)
		}
		res.Output = bytes.Clone(span)
	} else {
		res.Output = []byte{}
	}
	return nil
}

// initialize runs the module's initialisers (after the start function,
// which ran at instantiation) under the call's deadline. Their fuel, the
// start function's included, is counted apart from the call's and capped
// by the host's initialisation cap (Config.WithMaxInitFuel), the same for
// every call, so that whether a call's instance is new or restored never
// changes its outcome: the call's own max_fuel and Result.Fuel count the
// export alone.
func (in *instance) initialize(ctx context.Context) error {
	in.initializing = true
	for _, name := range in.m.c.init {
		var args []uint64
		if name == "hs_init" {
			args = []uint64{0, 0}
		}
		if _, err := in.mod.ExportedFunction(name).Call(ctx, args...); err != nil {
			if !isExit0(err) || in.mod.IsClosed() {
				return in.failure(name, 0, err)
			}
		}
	}
	if in.budget != nil {
		in.bookFuel()
		in.initFuel = in.fuelUsed
	}
	in.initialized, in.initializing = true, false
	if in.fds.changed() {
		// An initialiser left a file open or closed a preopen: no call
		// may start from this state but the one that made it.
		in.fds.noSnapshot = true
	}
	if in.onInit != nil && !in.fds.noSnapshot {
		if err := in.onInit(in); err != nil {
			in.onInit = nil
			if errors.Is(err, errWarmup) {
				return err
			}
			return in.failure("snapshot", 0, fmt.Errorf("%w: taking the snapshot: %v", errInternal, err))
		}
	}
	in.onInit = nil
	return nil
}

// pastDeadline reports whether the call's deadline has passed.
func (in *instance) pastDeadline() bool {
	return !in.deadline.IsZero() && !time.Now().Before(in.deadline)
}

// timeoutMessage says why a call timed out: its own timeout, or the
// deadline of the call it was made for (a tool_call's caller), which came
// first. The call's deadline is set a little before it starts (more on a
// loaded machine): a caller's deadline within 10 ms of the timeout is not
// told apart from it.
func (in *instance) timeoutMessage() string {
	if !in.deadline.IsZero() && !in.started.IsZero() {
		if budget := in.deadline.Sub(in.started); budget < in.limits.Timeout-10*time.Millisecond {
			return fmt.Sprintf("timed out after %v: the caller's deadline came before this call's %v timeout",
				budget.Round(time.Millisecond), in.limits.Timeout)
		}
	}
	return fmt.Sprintf("timed out after %v", in.limits.Timeout)
}

func isExit0(err error) bool {
	var exit *sys.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 0
}

// failure classifies an error from instantiating or running the guest.
func (in *instance) failure(export string, rc int32, err error) *CallError {
	if err == nil {
		err = errInternal
	}
	ce := &CallError{Export: export, ReturnCode: rc, Cause: err}
	var exit *sys.ExitError
	var capErr *CapabilityError
	var lim *limitError
	ctxErr := error(nil)
	if in.ctx != nil {
		ctxErr = in.ctx.Err()
	}
	switch {
	case errors.As(err, &lim):
		ce.Kind, ce.Code, ce.Message = ErrLimit, abi.CodeLimitExceeded, lim.Error()
	case in.alloc.denied:
		ce.Kind, ce.Code = ErrLimit, abi.CodeLimitExceeded
		ce.Message = fmt.Sprintf("memory limit of %d bytes exceeded", in.limits.MaxMemoryBytes)
	case errors.As(err, &capErr):
		ce.Kind, ce.Code, ce.Message = ErrDenied, abi.CodePermissionDenied, capErr.Error()
	case errors.Is(ctxErr, context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded):
		ce.Kind, ce.Code = ErrTimeout, abi.CodeTimeout
		ce.Message = in.timeoutMessage()
	case ctxErr != nil || (errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled):
		ce.Kind, ce.Code, ce.Message = ErrCanceled, abi.CodeTimeout, "canceled by the caller"
	case errors.As(err, &exit):
		ce.Kind, ce.Code = ErrTrap, abi.CodeTrap
		ce.Message = fmt.Sprintf("exited with code %d", exit.ExitCode())
	case errors.Is(err, errHTTP):
		ce.Kind, ce.Code, ce.Message = ErrTrap, abi.CodeUnavailable, firstLine(err.Error())
	case errors.Is(err, errInternal):
		ce.Kind, ce.Code, ce.Message = ErrTrap, abi.CodeInternal, firstLine(err.Error())
	default:
		ce.Kind, ce.Code, ce.Message = ErrTrap, abi.CodeTrap, firstLine(err.Error())
	}
	return ce
}

// firstLine drops wazero's stack trace and its "(recovered by wazero)" note.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, " (recovered by wazero)")
}

// nanosleep serves WASI clock sleeps (poll_oneoff): it sleeps for real, and
// returns early when the call's deadline passes so that a sleeping guest
// is stopped on time.
func (in *instance) nanosleep(ns int64) {
	ctx := in.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		trap(ctx.Err())
	}
}

// logEntryOverhead is what the host spends on a log entry besides its
// message (the LogEntry and its strings), charged against the log cap so
// that a flood of one-byte messages is held to the cap like one large one.
const logEntryOverhead = 64

// log records a guest message within the log byte cap.
func (in *instance) log(level abi.LogLevel, source string, msg []byte) {
	if in.logsTruncated || len(msg) == 0 {
		return
	}
	room := in.limits.MaxLogBytes - in.logBytes - logEntryOverhead
	if int64(len(msg)) > room {
		msg = msg[:max(room, 0)]
		in.logsTruncated = true
	}
	if len(msg) == 0 {
		return
	}
	in.logBytes += int64(len(msg)) + logEntryOverhead
	e := LogEntry{Level: level, Source: source, Message: string(msg)}
	in.logs = append(in.logs, e)
	if in.onLog != nil {
		in.onLog(e)
	}
}

// logWriter turns a guest's stdout or stderr into log entries.
type logWriter struct {
	in     *instance
	source string
}

func (w logWriter) Write(p []byte) (int, error) {
	level := abi.LogInfo
	if w.source == "stderr" {
		level = abi.LogWarn
	}
	w.in.log(level, w.source, p)
	return len(p), nil
}

// httpClient returns the egress client for this grant, shared by every
// call with the same network policy so connections are reused.
func (in *instance) httpClient() (*egress.Client, error) {
	g := in.grant
	key := fmt.Sprintf("%q|%v|%d", g.AllowedHosts, g.AllowPrivateNetwork, in.limits.MaxHTTPResponseBytes)
	if c, ok := in.m.h.egress.Load(key); ok {
		return c.(*egress.Client), nil
	}
	c, err := egress.NewClient(egress.Policy{
		AllowedHosts:     g.AllowedHosts,
		AllowPrivate:     g.AllowPrivateNetwork,
		MaxResponseBytes: in.limits.MaxHTTPResponseBytes,
	})
	if err != nil {
		return nil, &CapabilityError{Capability: "network", Detail: err.Error()}
	}
	actual, _ := in.m.h.egress.LoadOrStore(key, c)
	return actual.(*egress.Client), nil
}
