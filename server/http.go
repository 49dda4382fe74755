package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPPath is where the streamable HTTP endpoint is served.
const MCPPath = "/mcp"

// newProtocol is the first revision without sessions: a request carrying
// it (or a later one) in MCP-Protocol-Version is served statelessly.
const newProtocol = "2026-07-28"

// maxBody bounds a request body read to see what it asks for.
const maxBody = mcp.DefaultMaxRequestBodyBytes

type tenantKey struct{}

// Handler returns the server's HTTP handler: the MCP endpoint at /mcp
// (authenticated when tenants or OAuth are configured), /healthz, /readyz,
// the operator's /metrics and, with OAuth, the protected-resource
// metadata.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, s.ops.traceRequest(s.checkHost(s.authenticate(http.HandlerFunc(s.serveMCP)))))
	mux.Handle(MetricsPath, s.checkHost(s.ops.serveMetrics()))
	if s.oauth != nil {
		meta := s.checkHost(auth.ProtectedResourceMetadataHandler(s.oauth.metadata()))
		for _, p := range s.oauth.metadataPaths() {
			mux.Handle(p, meta)
		}
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !s.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready\n")
			return
		}
		io.WriteString(w, "ready\n")
	})
	return mux
}

// checkHost refuses a request whose Host header names a host the server
// was not told it is reached by: a web page that rebinds its own name to
// the server's address cannot talk to it. Loopback names are always
// accepted, so that a local server needs no configuration.
func (s *Server) checkHost(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	any := false
	for _, h := range s.cfg.Server.AllowedHosts {
		if h == "*" {
			any = true
		}
		allowed[h] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if any || hostAllowed(r.Host, allowed) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not one this server is reached by; an operator adds it to [server] allowed_hosts", r.Host), http.StatusForbidden)
	})
}

func hostAllowed(hostport string, allowed map[string]bool) bool {
	hostport = strings.ToLower(hostport)
	if allowed[hostport] {
		return true
	}
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if allowed[host] || allowed["["+host+"]"] {
		return true
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// authenticate finds the request's tenant by its bearer token: a
// tenant's API key, else (with [server.oauth]) an access token of the
// authorization server, which names its tenant. A server without tenants
// or OAuth serves its local tenant to everyone (it listens on loopback
// only). No token, or one that is neither, is 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	var withToken http.Handler
	if s.oauth != nil {
		// The SDK's middleware puts the token's TokenInfo where the
		// streamable handler looks for it, binding a session to its user.
		withToken = auth.RequireBearerToken(verifiedToken, &auth.RequireBearerTokenOptions{ClockSkew: s.oauth.leeway})(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.open() {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, s.local)))
			return
		}
		key, ok := bearer(r)
		if ok {
			if t := s.byKey[sha256.Sum256([]byte(key))]; t != nil {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, t)))
				return
			}
		}
		if s.oauth == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="skillhost"`)
			msg := "missing API key: send it as Authorization: Bearer <key>"
			if ok {
				msg = "unknown API key"
			}
			http.Error(w, "Unauthorized: "+msg, http.StatusUnauthorized)
			return
		}
		if !ok {
			s.oauth.challenge(w, &tokenError{status: http.StatusUnauthorized,
				msg: "missing access token: send an OAuth access token (or a tenant's API key) as Authorization: Bearer <token>"})
			return
		}
		info, t, terr := s.oauth.verify(r.Context(), key)
		if terr != nil {
			s.log.Debug("refused an access token", "status", terr.status, "reason", terr.msg)
			s.oauth.challenge(w, terr)
			return
		}
		ctx := context.WithValue(r.Context(), tenantKey{}, t)
		withToken.ServeHTTP(w, r.WithContext(context.WithValue(ctx, verifiedKey{}, info)))
	})
}

// bearer returns the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// serveMCP sends the request to the tenant's stateless handler when it
// speaks the sessionless revision, else to its stateful one, after
// admitting the tool calls it carries.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	t := r.Context().Value(tenantKey{}).(*tenant)
	stateless := r.Header.Get("MCP-Protocol-Version") >= newProtocol
	if r.Method == http.MethodPost {
		release, msgs, batch, ok := s.admitHTTP(w, r, t)
		if !ok {
			return
		}
		defer release()
		// While the request is in flight, and for a moment after (a
		// client's next request, and its reading of this answer, wait
		// on the network poller too), other tenants' guests leave this
		// tenant its share of the processors (see Engine.Busy).
		defer time.AfterFunc(busyLinger, s.e.Busy(t.id))
		if stateless && !batch && len(msgs) == 1 && s.fastCall(w, r, t, &msgs[0]) {
			return
		}
	}
	if stateless {
		t.stateless.ServeHTTP(w, r)
		return
	}
	t.stateful.ServeHTTP(w, r)
}

// busyLinger is how long a tenant stays busy after its request ended.
const busyLinger = 100 * time.Millisecond

// admitHTTP reads the body of a POST to find the tool calls in it and
// takes each into the tenant's quotas. A call refused by a quota is 429
// with Retry-After, a call while the server drains 503; either way the
// body is a JSON-RPC error. The body is put back for the MCP handler.
func (s *Server) admitHTTP(w http.ResponseWriter, r *http.Request, t *tenant) (release func(), msgs []rpcMessage, batch bool, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return nil, nil, false, false
	}
	if len(body) > maxBody {
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", maxBody), http.StatusRequestEntityTooLarge)
		return nil, nil, false, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msgs, batch = parseRPC(body)
	calls, id := toolCalls(msgs)
	if len(calls) == 0 {
		return func() {}, msgs, batch, true
	}
	if s.draining.Load() {
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, id, "the server is shutting down; retry on another instance or after it restarts")
		return nil, nil, false, false
	}
	var releases []func()
	releaseAll := func() {
		for _, f := range releases {
			f()
		}
	}
	for _, name := range calls {
		tool, _ := s.e.Tool(name) // unknown tools are the handler's to report
		rel, refusal := t.quota.admit(tool)
		if refusal != nil {
			s.ops.refused(t, refusal)
			releaseAll()
			if refusal.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(refusal.RetryAfter.Seconds())))
			} else {
				w.Header().Set("Retry-After", "1")
			}
			writeRPCError(w, http.StatusTooManyRequests, id, refusal.Error())
			return nil, nil, false, false
		}
		releases = append(releases, rel)
	}
	return releaseAll, msgs, batch, true
}

// rpcMessage is a JSON-RPC message as far as the HTTP layer reads it:
// enough to admit its tool calls and to answer a plain one directly.
// Fields the layer does not judge stay raw, so that a message is read
// here whenever it is JSON of this shape.
type rpcMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// parseRPC reads a JSON-RPC body: one message, or a batch. A body that is
// neither gives no messages; the MCP handler says what is wrong with it.
func parseRPC(body []byte) (msgs []rpcMessage, batch bool) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return nil, true
		}
		return msgs, true
	}
	var m rpcMessage
	if json.Unmarshal(trimmed, &m) != nil {
		return nil, false
	}
	return []rpcMessage{m}, false
}

// toolCalls returns the tool names of the tools/call requests among msgs,
// and the first one's id.
func toolCalls(msgs []rpcMessage) (names []string, id json.RawMessage) {
	for _, m := range msgs {
		if m.Method == "tools/call" {
			if id == nil {
				id = m.ID
			}
			names = append(names, m.Params.Name)
		}
	}
	return names, id
}

// writeRPCError writes a JSON-RPC error response with an HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32000, "message": msg},
	})
}
