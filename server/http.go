package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	mux.Handle(MCPPath, s.ops.traceRequest(s.checkHost(s.checkOrigin(s.authenticate(http.HandlerFunc(s.serveMCP))))))
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
	return s.withDeadlines(mux)
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
		s.ops.limitRefused(noTenant, "host")
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not one this server is reached by; an operator adds it to [server] allowed_hosts", r.Host), http.StatusForbidden)
	})
}

func hostAllowed(hostport string, allowed map[string]bool) bool {
	host, ok := parseHost(strings.ToLower(hostport))
	if !ok {
		return false
	}
	hostport = strings.ToLower(hostport)
	if allowed[hostport] || allowed[host] || allowed["["+host+"]"] || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseHost reads a Host header strictly: a DNS name or an IP address
// (IPv6 in brackets), then optionally a colon and a port number from 1 to
// 65535. It returns the host without brackets.
func parseHost(hostport string) (string, bool) {
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return "", false
		}
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", false
		}
		ip := net.ParseIP(host[1 : len(host)-1])
		if ip == nil || ip.To4() != nil {
			return "", false // only IPv6 goes in brackets
		}
		return host[1 : len(host)-1], true
	}
	if host == "" || len(host) > 253 {
		return "", false
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return host, true
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
// admitting the tool call it carries and counting it against the session
// limits.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	t := r.Context().Value(tenantKey{}).(*tenant)
	stateless := r.Header.Get("MCP-Protocol-Version") >= newProtocol
	// Only this layer says which call it admitted (see admitHTTP).
	r.Header.Del(admissionHeader)
	sid := r.Header.Get("Mcp-Session-Id")
	if !stateless && sid != "" {
		leave, refusal := s.sessions.enter(t.ID, sid)
		if refusal != nil {
			s.refuseSession(w, t, refusal)
			return
		}
		defer leave()
	}
	if r.Method == http.MethodPost {
		body, ok := s.readBody(w, r)
		if !ok {
			return
		}
		if err := checkKeys(body); err != nil {
			s.ops.limitRefused(t.ID, "request_keys")
			writeRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
				"Invalid Request: "+err.Error()+"; send each key of a JSON object once")
			return
		}
		rb := readBody(body)
		release, run, ok := s.admitHTTP(w, r, t, rb)
		if !ok {
			return
		}
		defer release()
		// While the request is in flight, and for a moment after (a
		// client's next request, and its reading of this answer, wait
		// on the network poller too), other tenants' guests leave this
		// tenant its share of the processors (see Engine.Busy).
		defer time.AfterFunc(busyLinger, s.e.Busy(t.ID))
		if stateless && run != nil && s.fastCall(w, r, run, rb) {
			return
		}
	}
	if stateless {
		t.stateless.ServeHTTP(w, r)
		return
	}
	if sid == "" && r.Method == http.MethodPost {
		e, evicted, refusal := s.sessions.open(t.ID)
		if evicted != nil {
			s.ops.sessionEvicted(t.ID)
			s.log.Info("closed the tenant's session idle the longest to open a new one (max_tenant_sessions)", "tenant", t.ID, "session", evicted.id)
			if evicted.mss != nil {
				evicted.mss.Close()
			}
		}
		if refusal != nil {
			s.refuseSession(w, t, refusal)
			return
		}
		defer s.sessions.started(e)
		r = r.WithContext(withEntry(r.Context(), e))
	}
	t.stateful.ServeHTTP(w, r)
}

// busyLinger is how long a tenant stays busy after its request ended.
const busyLinger = 100 * time.Millisecond

// refuseSession answers a request the session limits refuse.
func (s *Server) refuseSession(w http.ResponseWriter, t *tenant, refusal *sessionRefusal) {
	s.ops.limitRefused(t.ID, refusal.limit)
	w.Header().Set("Retry-After", "1")
	writeRPCError(w, refusal.status, jsonrpc.ID{}, -32000, refusal.msg)
}

// readBody reads a POST body, at most maxBody bytes and within the read
// timeout, and puts it back for the MCP handler. Once it is read, the
// connection has no read deadline: the answer may stream for as long as
// the call runs.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.limits.ReadTimeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.ops.limitRefused(noTenant, "read_timeout")
			http.Error(w, fmt.Sprintf("the request body did not arrive within %s (read_timeout)", s.limits.ReadTimeout), http.StatusRequestTimeout)
			return nil, false
		}
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if len(body) > maxBody {
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", maxBody), http.StatusRequestEntityTooLarge)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// admissionHeader carries, from admitHTTP to the call's handler, the
// token of the admission the HTTP layer made for the request's call. A
// client's own value is removed first, and a token is a random value the
// server keeps: a client cannot claim an admission it was not given.
const admissionHeader = "Skillhost-Admission"

// admission is a call the HTTP layer took into its tenant's quotas.
type admission struct {
	tenant, tool string
}

// admitHTTP takes the call of a body that is one tools/call request into
// the tenant's quotas before the SDK runs it, so that a refusal can be an
// HTTP 429 with Retry-After (or 503 while the server drains), the body a
// JSON-RPC error. The name is resolved inside the tenant first: a tool the
// tenant cannot reach is left for the handler to answer as unknown,
// exactly as a name no tool has, with nothing admitted. A batch, and any
// request that is not exactly one call, is admitted element by element
// where the SDK runs it (callTool). It returns the run the request was
// judged in, for the fast path (nil when none was needed).
func (s *Server) admitHTTP(w http.ResponseWriter, r *http.Request, t *tenant, rb rpcBody) (release func(), run *session, ok bool) {
	call, single := rb.single()
	if !single {
		return func() {}, nil, true
	}
	ss := &session{s: s, t: t}
	if ss.startRun() != nil {
		return func() {}, nil, true // the handler reports the failure
	}
	tool, reachable := ss.tool(call.params.Name)
	if !reachable {
		return func() {}, ss, true
	}
	if s.draining.Load() {
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, call.req.ID, -32000, "the server is shutting down; retry on another instance or after it restarts")
		return nil, nil, false
	}
	rel, refusal := t.quota.admit(tool)
	if refusal != nil {
		s.ops.refused(t, refusal)
		if refusal.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(refusal.RetryAfter.Seconds())))
		} else {
			w.Header().Set("Retry-After", "1")
		}
		writeRPCError(w, http.StatusTooManyRequests, call.req.ID, -32000, refusal.Error())
		return nil, nil, false
	}
	tok := newSessionID()
	s.admitted.Store(tok, admission{tenant: t.ID, tool: call.params.Name})
	r.Header.Set(admissionHeader, tok)
	return func() {
		s.admitted.Delete(tok)
		rel()
	}, ss, true
}

// preAdmitted reports whether the HTTP layer already admitted this call
// of the session's tenant (admitHTTP), and uses that admission up.
func (ss *session) preAdmitted(req *mcp.CallToolRequest) bool {
	if req.Extra == nil || req.Extra.Header == nil {
		return false
	}
	tok := req.Extra.Header.Get(admissionHeader)
	if tok == "" {
		return false
	}
	v, ok := ss.s.admitted.LoadAndDelete(tok)
	return ok && v.(admission) == admission{tenant: ss.t.ID, tool: req.Params.Name}
}

// writeRPCError writes a JSON-RPC error response with an HTTP status; an
// invalid id (a request that could not be read) is null.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id.Raw(),
		"error": map[string]any{"code": code, "message": msg},
	})
}
