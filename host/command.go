package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/skillhost/skillhost/abi"
)

// CommandOptions are the settings of Module.RunCommand.
type CommandOptions struct {
	// Grant is the effective grant the command runs under, as for a tool
	// call: its mounts, hosts, env, services and limits. Limits.Timeout
	// bounds the run; Limits.MaxOutputBytes caps what is kept of stdout
	// and Limits.MaxLogBytes what is kept of stderr.
	Grant Grant
	// Args are the command's arguments after the program name.
	Args []string
	// Stdin is what the command reads on standard input; nil reads as
	// empty.
	Stdin []byte
	// Tools and Services serve tool_call and capability_call, for a
	// command that imports them.
	Tools    ToolDispatcher
	Services ServiceProvider
	// OnLog receives the command's log_* messages as they are written.
	OnLog func(LogEntry)
	// CountFuel counts the command's fuel without a fuel limit, as
	// CallOptions.CountFuel does.
	CountFuel bool
}

// CommandResult is what a command produced. It is returned, with what
// was captured, also when the command failed.
type CommandResult struct {
	// ExitCode is the command's exit status: 0 when _start returned or
	// called proc_exit(0).
	ExitCode int32
	// Stdout and Stderr are what the command wrote, each cut at its cap;
	// the Truncated flags say a cap was reached (the command went on).
	Stdout, Stderr                   []byte
	StdoutTruncated, StderrTruncated bool
	// Logs are the log_* messages, if the command used the Extism imports.
	Logs     []LogEntry
	Duration time.Duration
	// Fuel is the instructions the command ran when FuelCounted is set,
	// as for Result.Fuel.
	Fuel        int64
	FuelCounted bool
}

// commandIO is what a command's instance is given in place of a tool's
// empty stdin and logged stdout/stderr.
type commandIO struct {
	args           []string
	stdin          []byte
	stdout, stderr *capBuffer
}

// capBuffer keeps the first max bytes written to it and counts the rest.
type capBuffer struct {
	mu        sync.Mutex
	buf       []byte
	max       int64
	truncated bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - int64(len(b.buf))
	if room < int64(len(p)) {
		b.truncated = true
		if room > 0 {
			b.buf = append(b.buf, p[:room]...)
		}
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// IsCommand reports whether the module is a WASI command: it exports
// _start as a function of no parameters and no results.
func (m *Module) IsCommand() bool {
	d, ok := m.c.exports[abi.ExportStart]
	return ok && len(d.ParamTypes()) == 0 && len(d.ResultTypes()) == 0
}

// RunCommand runs the module as a WASI command: a fresh instance whose
// _start is called with name and opts.Args as its argv, opts.Stdin as its
// standard input, and stdout and stderr captured up to their caps. It runs
// under opts.Grant exactly as a tool call does (mounts, hosts, env,
// services, memory, fuel and the timeout), always in this process: a
// grant's IsolationProcess applies to tool calls only.
//
// A command that exits with a non-zero status returns a *CallError of
// kind ErrGuest whose ReturnCode is the status; a timeout, a trap or a
// limit returns the *CallError a tool call would. The result is always
// non-nil and holds what was captured. A module that is not a command
// returns an error matching ErrExportNotFound.
func (m *Module) RunCommand(ctx context.Context, name string, opts *CommandOptions) (*CommandResult, error) {
	if opts == nil {
		opts = &CommandOptions{}
	}
	start := time.Now()
	res := &CommandResult{}
	if !m.h.enter() {
		return res, ErrClosed
	}
	defer m.h.leave()
	if !m.IsCommand() {
		return res, fmt.Errorf("%w: %s is not a WASI command module: it has no %s export of type () -> ()", ErrExportNotFound, m.name, abi.ExportStart)
	}
	limits := m.h.cfg.resolve(opts.Grant.Limits)
	cio := &commandIO{
		args:   append([]string{name}, opts.Args...),
		stdin:  opts.Stdin,
		stdout: &capBuffer{max: limits.MaxOutputBytes},
		stderr: &capBuffer{max: limits.MaxLogBytes},
	}
	defer func() {
		res.Stdout, res.StdoutTruncated = cio.stdout.bytes()
		res.Stderr, res.StderrTruncated = cio.stderr.bytes()
		res.Duration = time.Since(start)
	}()
	ctx, cancel := context.WithTimeout(ctx, limits.Timeout)
	defer cancel()
	copts := &CallOptions{Grant: opts.Grant, Tools: opts.Tools, Services: opts.Services, OnLog: opts.OnLog,
		CountFuel: opts.CountFuel, command: cio}
	// A command has no initialisers: its _start is the run.
	in, err := m.newInstance(ctx, opts.Grant, copts, true)
	if err != nil {
		return res, err
	}
	defer in.close()
	return res, in.runStart(ctx, res)
}

func (b *capBuffer) bytes() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...), b.truncated
}

// runStart calls the command's _start under ctx, which carries the
// deadline: no initialisers run (a command sets itself up in _start).
func (in *instance) runStart(ctx context.Context, res *CommandResult) (err error) {
	const export = abi.ExportStart
	defer func() {
		if p := recover(); p != nil {
			err = &CallError{Export: export, Kind: ErrTrap, Code: abi.CodeInternal,
				Message: fmt.Sprintf("internal error: %v", p), Cause: fmt.Errorf("%w: %v", errInternal, p)}
		}
		res.Logs = in.logs
		in.ctx, in.begun = nil, false
	}()
	if !in.begun {
		in.begin(ctx)
	}
	in.initializing = false
	in.kernel.reset()
	if in.limits.MaxFuel > 0 && in.budget == nil {
		return &CallError{Export: export, Kind: ErrBadConfig, Code: abi.CodeInternal,
			Message: fmt.Sprintf("max_fuel needs a metered module, and %s runs unmetered: %v", in.m.name, in.m.c.unmetered)}
	}
	if in.budget != nil {
		in.fuelUsed = 0
		in.giveFuel()
	}
	cctx := context.WithValue(ctx, instKey{}, in)
	_, callErr := in.mod.ExportedFunction(export).Call(cctx)
	if in.budget != nil {
		in.bookFuel()
		res.Fuel, res.FuelCounted = in.fuelUsed, true
	}
	var exit *sys.ExitError
	if callErr != nil && errors.As(callErr, &exit) && exit.ExitCode() < 256 && ctx.Err() == nil {
		// proc_exit: the command's own status.
		res.ExitCode = int32(exit.ExitCode())
		callErr = nil
	}
	if callErr != nil {
		return in.failure(export, 0, callErr)
	}
	if ctx.Err() != nil || in.pastDeadline() {
		err := ctx.Err()
		if err == nil {
			err = context.DeadlineExceeded
		}
		return in.failure(export, res.ExitCode, err)
	}
	if res.ExitCode != 0 {
		return &CallError{Export: export, Kind: ErrGuest, Code: abi.CodeGuestError, ReturnCode: res.ExitCode,
			Message: fmt.Sprintf("exited with code %d", res.ExitCode)}
	}
	return nil
}
