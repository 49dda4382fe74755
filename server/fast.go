package server

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Keys of a 2026-07-28 request's _meta.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaProgressToken   = "progressToken"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
)

// fastCall answers a stateless (2026-07-28) tools/call of a tool the
// tenant may reach without the SDK's per-request session: the SDK
// decodes each request several times with buffers of hundreds of
// kilobytes, which made a call over HTTP cost a hundred times one in
// process. Only the plainest request takes this path — exactly the
// 2026-07-28 revision, one JSON-RPC request, its headers and _meta
// agreeing, no progress token, a reachable tool; anything else, and every
// error, is left to the SDK, which answers it as the protocol says. It
// reports whether it answered.
func (s *Server) fastCall(w http.ResponseWriter, r *http.Request, ss *session, rb rpcBody) bool {
	if r.Method != http.MethodPost || r.Header.Get("MCP-Protocol-Version") != newProtocol ||
		r.Header.Get("Mcp-Method") != "tools/call" || !acceptsJSON(r) {
		return false
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	call, ok := rb.single()
	if !ok {
		return false
	}
	name := call.params.Name
	if name == "" || r.Header.Get("Mcp-Name") != name {
		return false
	}
	if version, _ := call.params.Meta[metaProtocolVersion].(string); version != newProtocol {
		return false
	}
	if _, ok := call.params.Meta[metaProgressToken]; ok {
		return false // progress goes as notifications on an event stream
	}
	if _, ok := ss.tool(name); !ok {
		return false
	}
	res, err := ss.callTool(r.Context(), &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{Name: name, Arguments: call.params.Arguments, Meta: mcp.Meta{metaProtocolVersion: newProtocol}},
		Extra:  &mcp.RequestExtra{Header: r.Header},
	})
	if err != nil {
		// Only a failure to make the call at all gets here; the SDK's
		// path would answer the same request the same way.
		writeRPCError(w, http.StatusInternalServerError, call.req.ID, jsonrpc.CodeInternalError, err.Error())
		return true
	}
	res.Meta = mcp.Meta{metaServerInfo: s.impl()}
	result, err := json.Marshal(res)
	if err != nil || len(result) < 2 || result[0] != '{' {
		writeRPCError(w, http.StatusInternalServerError, call.req.ID, jsonrpc.CodeInternalError, "the result cannot be encoded")
		return true
	}
	// The 2026-07-28 revision requires a result's resultType, which the
	// SDK's type sets only on its own path.
	result = append([]byte(`{"resultType":"complete",`), result[1:]...)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", call.req.ID.Raw(), result})
	return true
}

// impl is how the server names itself to clients.
func (s *Server) impl() *mcp.Implementation {
	return &mcp.Implementation{Name: "skillhost", Title: "skillhost", Version: s.version}
}

// acceptsJSON reports whether the request accepts both a JSON answer and
// an event stream, as streamable HTTP requires.
func acceptsJSON(r *http.Request) bool {
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(mt) {
			case "application/json", "application/*", "*/*":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			}
		}
	}
	return jsonOK && streamOK
}
