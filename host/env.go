package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/host/internal/egress"
)

type instKey struct{}

// instFrom returns the instance a host function runs for. Every call puts
// it into the context before entering the guest.
func instFrom(ctx context.Context) *instance {
	in, ok := ctx.Value(instKey{}).(*instance)
	if !ok {
		trapf(errInternal, "host function called outside a skillhost call")
	}
	return in
}

var (
	i64  = api.ValueTypeI64
	i32  = api.ValueTypeI32
	none = []api.ValueType{}
)

type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      func(ctx context.Context, in *instance, stack []uint64)
}

// envFuncs is the extism:host/env module, implemented natively.
var envFuncs = []hostFunc{
	{abi.FuncAlloc, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		off, err := in.kernel.alloc(s[0])
		if err != nil {
			trap(err)
		}
		s[0] = off
	}},
	{abi.FuncFree, []api.ValueType{i64}, none, func(_ context.Context, in *instance, s []uint64) {
		in.kernel.freeBlock(s[0])
	}},
	{abi.FuncLength, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.length(s[0])
	}},
	{abi.FuncLengthUnsafe, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.length(s[0])
	}},
	{abi.FuncLoadU8, []api.ValueType{i64}, []api.ValueType{i32}, func(_ context.Context, in *instance, s []uint64) {
		v, err := in.kernel.loadU8(s[0])
		if err != nil {
			trap(err)
		}
		s[0] = uint64(v)
	}},
	{abi.FuncLoadU64, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		v, err := in.kernel.loadU64(s[0])
		if err != nil {
			trap(err)
		}
		s[0] = v
	}},
	{abi.FuncStoreU8, []api.ValueType{i64, i32}, none, func(_ context.Context, in *instance, s []uint64) {
		if err := in.kernel.storeU8(s[0], uint32(s[1])); err != nil {
			trap(err)
		}
	}},
	{abi.FuncStoreU64, []api.ValueType{i64, i64}, none, func(_ context.Context, in *instance, s []uint64) {
		if err := in.kernel.storeU64(s[0], s[1]); err != nil {
			trap(err)
		}
	}},
	{abi.FuncInputLength, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.inputLen
	}},
	{abi.FuncInputOffset, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.inputOff
	}},
	{abi.FuncInputLoadU8, []api.ValueType{i64}, []api.ValueType{i32}, func(_ context.Context, in *instance, s []uint64) {
		v, err := in.kernel.loadU8(in.kernel.inputOff + s[0])
		if err != nil {
			trap(err)
		}
		s[0] = uint64(v)
	}},
	{abi.FuncInputLoadU64, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		v, err := in.kernel.loadU64(in.kernel.inputOff + s[0])
		if err != nil {
			trap(err)
		}
		s[0] = v
	}},
	{abi.FuncInputSet, []api.ValueType{i64, i64}, none, func(_ context.Context, in *instance, s []uint64) {
		if _, err := in.kernel.span(s[0], s[1]); err != nil {
			trap(err)
		}
		in.kernel.inputOff, in.kernel.inputLen = s[0], s[1]
	}},
	{abi.FuncOutputSet, []api.ValueType{i64, i64}, none, func(_ context.Context, in *instance, s []uint64) {
		if int64(s[1]) > in.limits.MaxOutputBytes || s[1] > 1<<62 {
			trap(&limitError{what: "output", limit: in.limits.MaxOutputBytes, detail: fmt.Sprintf("output_set of %d bytes", s[1])})
		}
		if _, err := in.kernel.span(s[0], s[1]); err != nil {
			trap(err)
		}
		in.kernel.outputOff, in.kernel.outputLen = s[0], s[1]
	}},
	{abi.FuncOutputLength, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.outputLen
	}},
	{abi.FuncOutputOffset, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.outputOff
	}},
	{abi.FuncErrorSet, []api.ValueType{i64}, none, func(_ context.Context, in *instance, s []uint64) {
		if s[0] != 0 {
			if _, err := in.kernel.bytes(s[0]); err != nil {
				trap(err)
			}
		}
		in.kernel.errorOff = s[0]
	}},
	{abi.FuncErrorGet, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = in.kernel.errorOff
	}},
	{abi.FuncReset, none, none, func(_ context.Context, in *instance, _ []uint64) {
		in.kernel.reset()
	}},
	{abi.FuncMemoryBytes, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = uint64(len(in.kernel.mem))
	}},
	{abi.FuncConfigGet, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		key := in.readString(s[0], "config key")
		v, ok := in.grant.Config[key]
		if !ok {
			s[0] = 0
			return
		}
		s[0] = in.write([]byte(v))
	}},
	{abi.FuncVarGet, []api.ValueType{i64}, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		key := in.readString(s[0], "var key")
		in.kernel.freeBlock(s[0])
		v, ok := in.vars[key]
		if !ok {
			s[0] = 0
			return
		}
		s[0] = in.write(v)
	}},
	{abi.FuncVarSet, []api.ValueType{i64, i64}, none, func(_ context.Context, in *instance, s []uint64) {
		key := in.readString(s[0], "var key")
		in.kernel.freeBlock(s[0])
		if s[1] == 0 {
			in.deleteVar(key)
			return
		}
		v := in.readBytes(s[1], "var value")
		in.kernel.freeBlock(s[1])
		in.setVar(key, v)
	}},
	{abi.FuncHTTPRequest, []api.ValueType{i64, i64}, []api.ValueType{i64}, func(ctx context.Context, in *instance, s []uint64) {
		s[0] = in.httpRequest(ctx, s[0], s[1])
	}},
	{abi.FuncHTTPStatusCode, none, []api.ValueType{i32}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = uint64(uint32(in.httpStatus))
	}},
	{abi.FuncHTTPHeaders, none, []api.ValueType{i64}, func(_ context.Context, in *instance, s []uint64) {
		if in.httpHeaders == nil {
			s[0] = 0
			return
		}
		b, err := json.Marshal(in.httpHeaders)
		if err != nil {
			trap(err)
		}
		s[0] = in.write(b)
	}},
	{abi.FuncGetLogLevel, none, []api.ValueType{i32}, func(_ context.Context, in *instance, s []uint64) {
		s[0] = uint64(uint32(in.logLevel))
	}},
	logFunc(abi.FuncLogTrace, abi.LogTrace),
	logFunc(abi.FuncLogDebug, abi.LogDebug),
	logFunc(abi.FuncLogInfo, abi.LogInfo),
	logFunc(abi.FuncLogWarn, abi.LogWarn),
	logFunc(abi.FuncLogError, abi.LogError),
}

func logFunc(name string, level abi.LogLevel) hostFunc {
	return hostFunc{name, []api.ValueType{i64}, none, func(_ context.Context, in *instance, s []uint64) {
		switch {
		case level < in.logLevel:
		case !in.logsTruncated:
			in.log(level, "log", in.readBytes(s[0], "log message"))
		default:
			// Past the log cap the message is checked, not copied.
			if _, err := in.kernel.bytes(s[0]); err != nil {
				trapf(errBadPointer, "reading log message: %v", err)
			}
		}
		in.kernel.freeBlock(s[0])
	}}
}

// userFuncs is the extism:host/user module: the skillhost functions beyond
// Extism's.
var userFuncs = []hostFunc{
	{abi.FuncToolCall, []api.ValueType{i64, i64}, []api.ValueType{i64}, func(ctx context.Context, in *instance, s []uint64) {
		s[0] = in.toolCall(ctx, s[0], s[1])
	}},
	{abi.FuncCapabilityCall, []api.ValueType{i64, i64}, []api.ValueType{i64}, func(ctx context.Context, in *instance, s []uint64) {
		s[0] = in.capabilityCall(ctx, s[0], s[1])
	}},
}

// instantiateHostModule registers funcs as the host module name.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime, name string, funcs []hostFunc) (api.Module, error) {
	b := rt.NewHostModuleBuilder(name)
	for _, f := range funcs {
		fn := f.fn
		b.NewFunctionBuilder().
			WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
				fn(ctx, instFrom(ctx), stack)
			}), f.params, f.results).
			WithName(f.name).
			Export(f.name)
	}
	return b.Instantiate(ctx)
}

// readBytes returns a copy of the block at off, trapping on a bad offset.
func (in *instance) readBytes(off uint64, what string) []byte {
	b, err := in.kernel.bytes(off)
	if err != nil {
		trapf(errBadPointer, "reading %s: %v", what, err)
	}
	return append([]byte(nil), b...)
}

func (in *instance) readString(off uint64, what string) string {
	b, err := in.kernel.bytes(off)
	if err != nil {
		trapf(errBadPointer, "reading %s: %v", what, err)
	}
	return string(b)
}

// write copies b into a new kernel block and returns its offset.
func (in *instance) write(b []byte) uint64 {
	off, err := in.kernel.allocBytes(b)
	if err != nil {
		trap(err)
	}
	return off
}

// varOverhead is what the host spends on a var besides its key and value,
// charged against the var cap.
const varOverhead = 64

func (in *instance) setVar(key string, v []byte) {
	size := in.varBytes + int64(len(key)) + int64(len(v)) + varOverhead
	if old, ok := in.vars[key]; ok {
		size -= int64(len(key)) + int64(len(old)) + varOverhead
	}
	if size > in.limits.MaxVarBytes {
		trap(&limitError{what: "var store", limit: in.limits.MaxVarBytes, detail: fmt.Sprintf("setting %q to %d bytes", key, len(v))})
	}
	if in.vars == nil {
		in.vars = map[string][]byte{}
	}
	in.vars[key] = v
	in.varBytes = size
}

func (in *instance) deleteVar(key string) {
	if old, ok := in.vars[key]; ok {
		in.varBytes -= int64(len(key)) + int64(len(old)) + varOverhead
		delete(in.vars, key)
	}
}

func (in *instance) httpRequest(ctx context.Context, reqOff, bodyOff uint64) uint64 {
	in.httpStatus, in.httpHeaders = 0, nil
	raw := in.readBytes(reqOff, "http request")
	in.kernel.freeBlock(reqOff)
	var req abi.HTTPRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		trapf(errGuestInput, "http_request: request is not the JSON {\"url\",\"method\",\"headers\"} object: %v", err)
	}
	var body []byte
	if bodyOff != 0 {
		body = in.readBytes(bodyOff, "http request body")
		in.kernel.freeBlock(bodyOff)
	}
	client, err := in.httpClient()
	if err != nil {
		trap(err)
	}
	resp, err := client.Do(ctx, egress.Request{URL: req.URL, Method: req.Method, Headers: req.Headers, Body: body})
	if err != nil {
		switch {
		case errors.Is(err, egress.ErrHostNotAllowed), errors.Is(err, egress.ErrAddressDenied):
			trap(&CapabilityError{Capability: "network", Detail: err.Error()})
		case errors.Is(err, egress.ErrResponseTooLarge):
			trap(&limitError{what: "http response", limit: in.limits.MaxHTTPResponseBytes, detail: req.URL})
		case ctx.Err() != nil:
			trap(ctx.Err())
		}
		trapf(errHTTP, "%v", err)
	}
	in.httpStatus = int32(resp.Status)
	in.httpHeaders = resp.Headers
	if len(resp.Body) == 0 {
		return 0
	}
	return in.write(resp.Body)
}

var (
	errGuestInput = errors.New("guest passed a malformed value to a host function")
	errHTTP       = errors.New("http request failed")
)

func (in *instance) toolCall(ctx context.Context, nameOff, argsOff uint64) uint64 {
	name := in.readString(nameOff, "tool name")
	args := in.readBytes(argsOff, "tool arguments")
	res := in.dispatchTool(ctx, name, args)
	return in.writeResult(res)
}

func (in *instance) dispatchTool(ctx context.Context, name string, args []byte) abi.ToolResult {
	if !allowedName(in.grant.Tools, name) {
		return errResult(abi.CodePermissionDenied, fmt.Sprintf("tool %q is not among the tools this module may call", name))
	}
	if in.depth+1 > in.maxDepth {
		return errResult(abi.CodeDepthExceeded, fmt.Sprintf("tool_call depth limit of %d reached calling %q", in.maxDepth, name))
	}
	if in.tools == nil {
		return errResult(abi.CodeUnavailable, "no tool dispatcher is configured for this call")
	}
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return errResult(abi.CodeInvalidInput, fmt.Sprintf("arguments for %q are not valid JSON", name))
	}
	if in.share != nil {
		// Waiting for the tool, the guest does not run: the tool's own
		// guest, of the same group, takes its place in the share.
		in.m.h.fair.leave(in.share)
		defer func() { in.share = in.m.h.fair.enter(in.group) }()
	}
	return in.tools.CallTool(withDepth(ctx, in.depth+1), name, json.RawMessage(args))
}

func (in *instance) capabilityCall(ctx context.Context, idOff, argsOff uint64) uint64 {
	id := in.readString(idOff, "capability id")
	args := in.readBytes(argsOff, "capability arguments")
	var res abi.ToolResult
	switch {
	case !allowedName(in.grant.Capabilities, id):
		res = errResult(abi.CodePermissionDenied, fmt.Sprintf("capability %q is not granted to this module", id))
	case in.services == nil:
		res = errResult(abi.CodeUnavailable, fmt.Sprintf("no provider for capability %q", id))
	default:
		if len(args) == 0 {
			args = []byte("{}")
		}
		out, err := in.services.CallService(ctx, id, json.RawMessage(args))
		if err != nil {
			var ae *abi.Error
			if errors.As(err, &ae) {
				res = abi.ToolResult{IsError: true, Error: ae}
			} else {
				res = errResult(abi.CodeUnavailable, err.Error())
			}
		} else {
			res = abi.ToolResult{Output: out}
		}
	}
	return in.writeResult(res)
}

func (in *instance) writeResult(res abi.ToolResult) uint64 {
	if res.Error != nil {
		res.IsError = true
	}
	if !res.IsError && len(res.Output) == 0 {
		res.Output = json.RawMessage("null")
	}
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(errResult(abi.CodeInternal, "tool result is not valid JSON"))
	}
	return in.write(b)
}

func errResult(code abi.Code, msg string) abi.ToolResult {
	return abi.ToolResult{IsError: true, Error: &abi.Error{Code: code, Message: msg}}
}

func allowedName(granted []string, name string) bool {
	for _, g := range granted {
		if g == name || g == "*" {
			return true
		}
	}
	return false
}
