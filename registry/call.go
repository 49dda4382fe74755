package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/packs"
)

// CallOptions adjust one call.
type CallOptions struct {
	// OnLog receives a Wasm tool's log entries as they are written.
	OnLog func(host.LogEntry)
	// Config holds per-call config values for the tool (a tenant's, or
	// `skillhost call --config`), over the operator's; they are checked
	// against the tool's config params first.
	Config map[string]string
}

// call is one call in flight.
type call struct {
	run  *Run
	tool *Tool
	args json.RawMessage
	opts *CallOptions
	host host.CallOptions // a Wasm tool's, here to save an allocation
}

// noOptions stands for a nil *CallOptions; calls only read it.
var noOptions CallOptions

// Call runs the tool called name with args (a JSON object; empty means
// {}) in the run. A tool the run cannot reach is ErrToolNotFound, the same
// error as a tool that does not exist; a deferred tool the run may
// activate is activated and run. Arguments are validated against the
// tool's input schema before the tool runs, whatever its language: a
// violation, like every failure of the tool itself, is a Result with
// IsError set, shown to the model, and a nil error. A Go error means the
// request could not be made at all.
func (run *Run) Call(ctx context.Context, name string, args json.RawMessage, opts *CallOptions) (*Result, error) {
	start := time.Now()
	t, ok := run.reg.lookup(name)
	if !ok || !run.allowed(t) {
		return nil, fmt.Errorf("%w: %q", ErrToolNotFound, name)
	}
	if !t.Hidden && !run.loaded(t) {
		if run.reg.opts.ToolSearch.DisableActivation {
			run.reg.emit(ctx, run.rc, EventToolActivationDenied, map[string]any{"tool_name": name, "reason": "activation on first use is off"})
			return nil, fmt.Errorf("%w: %q", ErrToolNotFound, name)
		}
		source := "model"
		if host.CallDepth(ctx) > 0 {
			source = "tool_call"
		}
		run.activate(ctx, t, source, "first use")
	}
	if opts == nil {
		opts = &noOptions
	}
	c := call{run: run, tool: t, args: args, opts: opts}
	res := run.call(ctx, &c)
	if ev := run.reg.opts.Events; ev != nil {
		end := time.Now()
		ev.Event(ctx, Event{Name: EventToolCall, Time: end, Run: run.rc,
			Call: callEvent(t, c.args, res, end.Sub(start), host.CallDepth(ctx))})
	}
	return res, nil
}

// call validates, dispatches and normalises one call.
func (run *Run) call(ctx context.Context, c *call) (res *Result) {
	t := c.tool
	defer func() {
		if p := recover(); p != nil {
			// Nothing a call brings — arguments, an implementation's bug —
			// may take the process down; the stack goes to the log, not
			// to the model. A built-in's panic comes from the goroutine it
			// ran in, with that goroutine's stack.
			stack := debug.Stack()
			if bp, ok := p.(*builtinPanic); ok {
				p, stack = bp.value, bp.stack
			}
			run.reg.emit(ctx, run.rc, EventToolPanic, map[string]any{"tool_name": t.Name, "panic": fmt.Sprint(p), "stack": string(stack)})
			res = errorResult(abi.CodeInternal, "tool %q failed inside the host", t.Name)
		}
	}()
	args, bad := checkArgs(t, c.args)
	if bad != nil {
		c.args = nil // refused: the tool did not run with them
		return bad
	}
	c.args = args
	if len(c.opts.Config) > 0 && t.Kind == KindWasm {
		if err := run.reg.checkConfig(t, c.opts.Config); err != nil {
			return errorResult(abi.CodeInvalidInput, "%v", err)
		}
	}
	res, err := t.impl.call(ctx, c)
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return &Result{IsError: true, Error: &abi.Error{Code: te.Code, Message: te.Message}}
		}
		return errorResult(abi.CodeGuestError, "%v", err)
	}
	if res.IsError {
		return res
	}
	return run.reg.normalise(t, res)
}

// checkArgs parses args as a JSON object and validates it against t's
// input schema. It returns the arguments to pass on, or a tool error
// result listing every violation with its JSON path.
func checkArgs(t *Tool, args json.RawMessage) (json.RawMessage, *Result) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return nil, errorResult(abi.CodeInvalidInput, "arguments for %q must be a JSON object, got %s", t.Name, jsonKind(args))
	}
	// Fast path: arguments the plan finds valid need no decoding. Anything
	// else, valid or not, is checked (and reported) by the validator below.
	if t.fast.Valid(args) {
		return args, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, errorResult(abi.CodeInvalidInput, "arguments for %q are not valid JSON: %v", t.Name, err)
	}
	if t.input == nil {
		return args, nil
	}
	vs, err := packs.ValidateValue(t.input, v, args)
	if err != nil {
		return nil, errorResult(abi.CodeInvalidInput, "arguments for %q: %v", t.Name, err)
	}
	if len(vs) > 0 {
		return nil, &Result{IsError: true, Error: &abi.Error{Code: abi.CodeInvalidInput,
			Message: violationsMessage(fmt.Sprintf("arguments for %q do not match its input schema", t.Name), vs)}}
	}
	return args, nil
}

// violationsMessage joins violations under intro: "intro: $.text: must be
// a string, got number; $: missing required field "n"".
func violationsMessage(intro string, vs []packs.Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return intro + ": " + strings.Join(parts, "; ")
}

// jsonKind names the JSON type of a document.
func jsonKind(doc []byte) string {
	if !json.Valid(doc) {
		return "something that is not JSON"
	}
	switch doc[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// normalise turns a tool's raw output into what the model is shown: JSON
// as it is, UTF-8 text as a JSON string; binary output is refused, and so
// is output past the result cap or not matching a declared output schema.
func (r *Registry) normalise(t *Tool, res *Result) *Result {
	out := bytes.TrimSpace(res.Output)
	switch {
	case len(out) == 0:
		out = []byte("null")
	case json.Valid(out):
	case utf8.Valid(res.Output):
		out, _ = json.Marshal(string(res.Output))
	default:
		return withLogs(errorResult(abi.CodeInternal,
			"tool %q returned %d bytes of binary output; a tool returns JSON or UTF-8 text (encode binary data, e.g. as base64 in a JSON field)",
			t.Name, len(res.Output)), res)
	}
	if len(out) > r.opts.MaxResultBytes {
		return withLogs(errorResult(abi.CodeLimitExceeded, "tool %q returned %d bytes, above the %d-byte result cap",
			t.Name, len(out), r.opts.MaxResultBytes), res)
	}
	if t.output != nil && !t.fastOut.Valid(out) { // fast path: see checkArgs
		vs, err := packs.ValidateJSON(t.output, out)
		if err != nil || len(vs) > 0 {
			if err != nil {
				vs = []packs.Violation{{Path: "$", Message: err.Error()}}
			}
			return withLogs(&Result{IsError: true, Error: &abi.Error{Code: abi.CodeInternal,
				Message: violationsMessage(fmt.Sprintf("tool %q returned output that does not match its output schema", t.Name), vs)}}, res)
		}
	}
	res.Output = json.RawMessage(out)
	return res
}

func withLogs(r, from *Result) *Result {
	r.Logs, r.Fuel, r.FuelCounted, r.Instantiate, r.Execute = from.Logs, from.Fuel, from.FuelCounted, from.Instantiate, from.Execute
	return r
}

// checkConfig checks per-call config values against t's config params.
func (r *Registry) checkConfig(t *Tool, values map[string]string) error {
	return packs.CheckToolConfig(t.ToolSpec, values)
}

// wasmTool runs a tool exported by a pack's module.
type wasmTool struct {
	reg    *Registry
	pack   *packs.Pack
	mod    *packs.Module
	export string
}

func (w *wasmTool) call(ctx context.Context, c *call) (*Result, error) {
	hm, err := w.reg.module(ctx, w.pack, w.mod)
	if err != nil {
		if errors.Is(err, host.ErrInvalidModule) || errors.Is(err, host.ErrUnknownImport) || errors.Is(err, host.ErrHashMismatch) {
			return nil, &ToolError{Code: abi.CodeUnavailable, Message: err.Error()}
		}
		return nil, &ToolError{Code: abi.CodeInternal, Message: err.Error()}
	}
	g := c.run.grant(c.tool, w.mod)
	if len(c.opts.Config) > 0 {
		cfg := make(map[string]string, len(g.Config)+len(c.opts.Config))
		for k, v := range g.Config {
			cfg[k] = v
		}
		for k, v := range c.opts.Config {
			cfg[k] = v
		}
		g.Config = cfg
	}
	// The run's tenant is the group whose guests share the processors
	// fairly with other tenants' (host.CallOptions.Group).
	c.host = host.CallOptions{Grant: g, Tools: dispatcher{c.run}, Services: c.run.services, OnLog: c.opts.OnLog,
		Group: c.run.rc.Tenant, CountFuel: c.run.countFuel}
	hres, err := hm.Call(ctx, c.tool.Export, c.args, &c.host)
	res := &Result{Logs: hres.Logs, Fuel: hres.Fuel, FuelCounted: hres.FuelCounted, Instantiate: hres.Instantiate, Execute: hres.Execute}
	if err != nil {
		var ce *host.CallError
		if !errors.As(err, &ce) {
			return nil, &ToolError{Code: abi.CodeInternal, Message: err.Error()}
		}
		res.IsError, res.Error = true, ce.ABIError()
		return res, nil
	}
	res.Output = hres.Output
	return res, nil
}

// dispatcher serves a guest's tool_call through the run it was made in:
// the same visibility, validation, grants of the called tool and events
// as a model's call. The host has already checked that the caller's grant
// names the tool and that the nesting depth allows another level; ctx
// carries the caller's deadline and the depth.
type dispatcher struct{ run *Run }

var _ host.ToolDispatcher = dispatcher{}

func (d dispatcher) CallTool(ctx context.Context, name string, args json.RawMessage) abi.ToolResult {
	res, err := d.run.Call(ctx, name, args, nil)
	if err != nil {
		code := abi.CodeInternal
		if errors.Is(err, ErrToolNotFound) {
			code = abi.CodeNotFound
		}
		return abi.ToolResult{IsError: true, Error: &abi.Error{Code: code, Message: err.Error()}}
	}
	return abi.ToolResult{Output: res.Output, IsError: res.IsError, Error: res.Error}
}

// nativeTool runs a Go tool.
type nativeTool struct{ n Native }

func (n nativeTool) call(ctx context.Context, c *call) (*Result, error) {
	out, err := n.n.Execute(withRun(ctx, c.run), c.args)
	if err != nil {
		return nil, err
	}
	return &Result{Output: out}, nil
}

// builtinTool runs one of skillhost's own tools under a deadline, as the
// host runs a Wasm tool under its timeout: the call's context ends after
// timeout (or at the caller's deadline, when that comes first), and the
// call returns then with a timeout error whether the built-in has
// returned or not. A built-in that waits for something that does not
// look at its context (a lock, a file system, a Go skill's function) goes
// on in its goroutine until that wait ends, with its context done; its
// answer is dropped. So nothing a model calls holds its caller past the
// deadline.
type builtinTool struct {
	n       Native
	timeout time.Duration
}

// builtinPanic carries a built-in's panic, and the stack of the goroutine
// it ran in, to the goroutine that made the call (see Run.call).
type builtinPanic struct {
	value any
	stack []byte
}

func (b builtinTool) call(ctx context.Context, c *call) (*Result, error) {
	start := time.Now()
	outer, _ := ctx.Deadline()
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	type answer struct {
		out   json.RawMessage
		err   error
		panic *builtinPanic
	}
	done := make(chan answer, 1) // the goroutine never waits to hand its answer over
	go func() {
		var a answer
		defer func() {
			if p := recover(); p != nil {
				a = answer{panic: &builtinPanic{value: p, stack: debug.Stack()}}
			}
			done <- a
		}()
		a.out, a.err = b.n.Execute(withRun(ctx, c.run), c.args)
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		select {
		case a = <-done: // it answered as the deadline came
		default:
			return nil, b.timedOut(ctx, c.tool.Name, start, outer)
		}
	}
	switch {
	case a.panic != nil:
		panic(a.panic)
	case a.err != nil && ctx.Err() != nil:
		// Failed because its context ended: say so the way every
		// built-in's timeout is said.
		return nil, b.timedOut(ctx, c.tool.Name, start, outer)
	case a.err != nil:
		return nil, a.err
	}
	return &Result{Output: a.out}, nil
}

// timedOut is the tool error of a built-in whose context ended: its own
// timeout, the deadline of the call it was made for (a guest's
// tool_call, a server's request), or the caller giving up.
func (b builtinTool) timedOut(ctx context.Context, name string, start, outer time.Time) *ToolError {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &ToolError{Code: abi.CodeTimeout, Message: fmt.Sprintf("tool %q was canceled by the caller", name)}
	}
	if !outer.IsZero() && outer.Sub(start) < b.timeout {
		return &ToolError{Code: abi.CodeTimeout, Message: fmt.Sprintf(
			"tool %q timed out after %v: the caller's deadline came before this call's %v timeout",
			name, time.Since(start).Round(time.Millisecond), b.timeout)}
	}
	return &ToolError{Code: abi.CodeTimeout, Message: fmt.Sprintf("tool %q timed out after %v", name, b.timeout)}
}

type runKey struct{}

// withRun puts the run into ctx for the tools that need it (built-ins).
func withRun(ctx context.Context, run *Run) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunFrom returns the run a native or built-in tool is called in, or nil.
func RunFrom(ctx context.Context) *Run {
	run, _ := ctx.Value(runKey{}).(*Run)
	return run
}
