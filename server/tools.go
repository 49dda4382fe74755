package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/abi"
	"github.com/skillhost/skillhost/registry"
)

// listTTL is how long a stateless client may keep a tools/list answer: a
// stateless catalog changes only when the operator reloads the packs.
const listTTL = 60_000

// listTools renders the run's visible catalog, sorted by name. The answer
// depends on the caller's tenant and key, so it is cached privately; a
// session's list changes as it activates tools, so it is not cached.
func (ss *session) listTools(rev string) *mcp.ListToolsResult {
	opts := ss.s.e.RenderOptions()
	opts.MCPRevision = rev
	rendered := registry.MCPTools(ss.run.Tools(), opts)
	res := &mcp.ListToolsResult{Tools: make([]*mcp.Tool, 0, len(rendered))}
	for _, r := range rendered {
		res.Tools = append(res.Tools, mcpTool(r))
	}
	res.CacheScope = "private"
	if ss.id == "" {
		res.TTLMs = listTTL
	}
	return res
}

// protocolOf is the MCP revision a request speaks: the one its _meta
// names (a request of the stateless 2026-07-28 revision), else the one
// its session negotiated at initialize; "" when neither says.
func protocolOf(req mcp.Request) string {
	// A request without params holds a nil pointer of its params' type.
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if v, _ := p.GetMeta()[metaProtocolVersion].(string); v != "" {
			return v
		}
	}
	if mss, ok := req.GetSession().(*mcp.ServerSession); ok && mss != nil {
		if ip := mss.InitializeParams(); ip != nil {
			return ip.ProtocolVersion
		}
	}
	return ""
}

// mcpTool converts a rendering to the SDK's type through their common
// JSON form.
func mcpTool(r registry.MCPTool) *mcp.Tool {
	data, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("server: rendering tool %q: %v", r.Name, err)) // only JSON values inside
	}
	t := new(mcp.Tool)
	if err := json.Unmarshal(data, t); err != nil {
		panic(fmt.Sprintf("server: rendering tool %q: %v", r.Name, err))
	}
	return t
}

// errUnknownTool is the protocol error for a tool the caller cannot
// reach, whether it does not exist or is not the caller's.
func errUnknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// callTool runs a tools/call in the session's run.
func (ss *session) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, args := req.Params.Name, req.Params.Arguments
	t, reachable := ss.tool(name)
	if !reachable {
		return nil, errUnknownTool(name)
	}
	if ss.s.draining.Load() {
		return toolError(abi.CodeUnavailable, "the server is shutting down; retry on another instance or after it restarts"), nil
	}
	// A call is admitted here unless the HTTP layer admitted it already
	// (one tools/call in a POST, see admitHTTP): on standard input, in a
	// batch, and for any request the HTTP layer did not judge to be this
	// call.
	if !ss.preAdmitted(req) {
		release, refusal := ss.t.quota.admit(t)
		if refusal != nil {
			ss.s.ops.refused(ss.t, refusal)
			return toolError(abi.CodeLimitExceeded, "%s", refusal.Error()), nil
		}
		defer release()
	}
	ss.s.calls.Add(1)
	defer ss.s.calls.Done()
	opts := &registry.CallOptions{}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		opts.OnLog = progressReporter(ctx, req.Session, tok)
	}
	var hdr http.Header
	if req.Extra != nil {
		hdr = req.Extra.Header
	}
	ctx, span := ss.s.ops.startCall(ctx, ss, name, hdr)
	res, err := ss.run.Call(ctx, name, args, opts)
	endCall(span, res != nil && res.IsError, err)
	if err != nil {
		if errors.Is(err, registry.ErrToolNotFound) {
			return nil, errUnknownTool(name)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return callResult(t, res, protocolOf(req)), nil
}

// tool returns the registry's tool called name when the session's run
// may reach it.
func (ss *session) tool(name string) (*registry.Tool, bool) {
	if !ss.run.Reachable(name) {
		return nil, false
	}
	t, ok := ss.run.Registry().Tool(name)
	return t, ok
}

// callResult is a run's result as MCP shows it to a client of revision
// rev: the output as text (a JSON string unquoted, anything else as
// JSON), and as structured content when tools/list gave the client the
// tool's output schema — from 2026-07-28 any schema object, with the
// output whatever JSON value it is; before, an object schema, with an
// object output; a tool error with isError and its code in the text.
func callResult(t *registry.Tool, res *registry.Result, rev string) *mcp.CallToolResult {
	if res.IsError {
		code, msg := abi.CodeInternal, "the tool failed"
		if res.Error != nil {
			code, msg = res.Error.Code, res.Error.Message
		}
		return toolError(code, "%s", msg)
	}
	out := &mcp.CallToolResult{}
	var s string
	if json.Unmarshal(res.Output, &s) == nil {
		out.Content = []mcp.Content{&mcp.TextContent{Text: s}}
	} else {
		out.Content = []mcp.Content{&mcp.TextContent{Text: string(res.Output)}}
	}
	switch {
	case len(t.OutputSchema) == 0 || len(res.Output) == 0 || !json.Valid(res.Output):
	case rev >= registry.MCPRevisionAnyOutput:
		if s := bytes.TrimLeft(t.OutputSchema, " \t\r\n"); len(s) > 0 && s[0] == '{' {
			out.StructuredContent = json.RawMessage(res.Output)
		}
	case res.Output[0] == '{':
		out.StructuredContent = json.RawMessage(res.Output)
	}
	return out
}

// toolError is a tool error result: shown to the model, which may correct
// its call.
func toolError(code abi.Code, format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(code) + ": " + fmt.Sprintf(format, args...)}}}
}
