// Package server serves an engine's tools and skills over the Model
// Context Protocol: on standard input and output for one local client, and
// as streamable HTTP at /mcp for many, with tenants, API keys or OAuth
// access tokens, and quotas.
//
// One MCP session is one run of the engine (registry.Run): its visible
// catalog is what tools/list returns, and calling a deferred tool the run
// may activate activates it and tells the client the list changed. A
// request of the stateless 2026-07-28 revision is a run of its own.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server/serveconf"
	"github.com/skillhost/skillhost/tenancy"
)

// LocalTenant is the tenant of a server with no [tenants] configured.
const LocalTenant = "local"

// Errors of New and ListenAndServe.
var (
	// ErrUnsafeListen: the address is not loopback and the server has no
	// authentication (tenants with keys, or OAuth), or no allowed host is
	// configured for it.
	ErrUnsafeListen = errors.New("server: refusing to listen")
	// ErrBadTenants: the [tenants] sections contradict each other or the
	// catalog. It is tenancy.ErrBadTenants.
	ErrBadTenants = tenancy.ErrBadTenants
)

// Options configure a Server.
type Options struct {
	// Config holds the [server] and [tenants] sections; nil means those of
	// the engine's operator config (serveconf.Of). A Config built in Go is
	// checked (Config.Validate).
	Config *serveconf.Config
	// Logger receives the server's own log records; nil is slog.Default.
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
	// StdioTenant is the tenant ServeStdio serves; "" is the only tenant
	// when there is one, else LocalTenant's rules (every tool).
	StdioTenant string
	// Events is the hub the engine was opened with; without it the server
	// cannot charge calls' fuel and guest time to quotas, nor audit them.
	Events *EventHub
	// Stdout is where [server] audit_log = "-" writes; nil is os.Stdout.
	Stdout io.Writer
	// MetricsToken, when set, is the bearer token /metrics asks for on a
	// server with tenants or OAuth (which serves no metrics without one).
	MetricsToken string
	// TracerProvider makes the server's spans; nil is OpenTelemetry's
	// global provider, which records nothing unless one was installed.
	TracerProvider trace.TracerProvider
}

// Server is an MCP server over an engine. It is safe for concurrent use.
type Server struct {
	e       Engine
	cfg     *serveconf.Config
	log     *slog.Logger
	sdkLog  *slog.Logger // the SDK's: it logs every connection at Info
	version string

	tenants map[string]*tenant
	byKey   map[[32]byte]*tenant
	local   *tenant // the tenant of a server without [tenants]; nil otherwise
	stdio   *tenant
	oauth   *oauthVerifier // nil without [server.oauth]

	draining atomic.Bool
	calls    sync.WaitGroup
	ready    atomic.Bool // set by Warm
	ops      *ops        // audit log, metrics, traces (ops.go)

	limits    serveconf.Limits // [server]'s limits, defaults filled in
	sessions  *sessionTable    // the HTTP transport's open sessions
	admitted  sync.Map         // admissionHeader token -> admission
	origins   map[string]bool  // [server] allowed_origins, normalised
	anyOrigin bool
}

// tenant is one tenant and the server's state of it.
type tenant struct {
	*tenancy.Tenant
	quota *quota

	stateful, stateless http.Handler
}

// New returns a server over e. It checks the tenants against the catalog:
// a pack may belong to one tenant only. The server answers calls at once,
// but /readyz says it is ready only after Warm.
func New(e Engine, opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{e: e, cfg: opts.Config, log: opts.Logger, version: opts.Version,
		tenants: map[string]*tenant{}, byKey: map[[32]byte]*tenant{}}
	if s.cfg == nil {
		s.cfg = serveconf.Of(e.Operator())
	}
	if err := s.cfg.Validate(); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.version == "" {
		s.version = "dev"
	}
	s.sdkLog = slog.New(minLevel{s.log.Handler(), slog.LevelWarn})
	s.limits = s.cfg.Server.Limits.WithDefaults()
	s.sessions = newSessionTable(s.limits)
	s.origins = map[string]bool{}
	for _, o := range s.cfg.Server.AllowedOrigins {
		if o == "*" {
			s.anyOrigin = true
		}
		s.origins[o] = true
	}
	set, err := s.cfg.Tenancy()
	if err != nil {
		return nil, err
	}
	if err := checkSkillTenants(e, set); err != nil {
		return nil, err
	}
	if set.Len() == 0 {
		// The local tenant sees every pack's tools but those [server]
		// shared_packs leaves out.
		if set, err = tenancy.New(s.cfg.Server.SharedPacks, tenancy.Tenant{ID: LocalTenant}); err != nil {
			return nil, err
		}
		s.local = s.newTenant(set.Tenant(LocalTenant))
		s.tenants[LocalTenant] = s.local
	}
	for _, tc := range s.cfg.Tenants {
		t := s.newTenant(set.Tenant(tc.ID))
		s.tenants[t.ID] = t
		for _, h := range tc.KeyHashes {
			s.byKey[h] = t
		}
	}
	if o := s.cfg.Server.OAuth; o != nil {
		if s.oauth, err = newOAuthVerifier(s, o, s.log); err != nil {
			return nil, err
		}
	}
	switch {
	case opts.StdioTenant != "":
		if s.stdio = s.tenants[opts.StdioTenant]; s.stdio == nil {
			return nil, fmt.Errorf("%w: no tenant %q to serve on standard input; the tenants are %s", ErrBadTenants, opts.StdioTenant, strings.Join(s.tenantIDs(), ", "))
		}
	case s.local != nil:
		s.stdio = s.local
	case len(s.tenants) == 1:
		for _, t := range s.tenants {
			s.stdio = t
		}
	}
	if s.ops, err = newOps(s, opts); err != nil {
		return nil, err
	}
	if opts.Events != nil {
		opts.Events.server.Store(s)
	}
	return s, nil
}

func (s *Server) tenantIDs() []string {
	ids := make([]string, 0, len(s.tenants))
	for id := range s.tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (s *Server) newTenant(tn *tenancy.Tenant) *tenant {
	t := &tenant{Tenant: tn, quota: newQuota(tn.Quotas)}
	t.stateful = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return s.httpServer(t, r, false) },
		&mcp.StreamableHTTPOptions{Logger: s.sdkLog, SessionTimeout: s.limits.SessionIdleTimeout})
	t.stateless = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return s.httpServer(t, r, true) },
		&mcp.StreamableHTTPOptions{Logger: s.sdkLog, Stateless: true, PropagateRequestCancellation: true})
	return t
}

// newSessionID returns a random session id.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// session is one MCP session (or stateless request) and its run.
type session struct {
	s      *Server
	t      *tenant
	id     string // "" for a stateless request
	run    *registry.Run
	srv    *mcp.Server
	entry  *sessionEntry // its place in the HTTP session table; nil on stdio
	ending sync.Once
}

// newSession makes the MCP server of one session (id "" for a stateless
// request) of tenant t.
func (s *Server) newSession(t *tenant, id string) (*session, error) {
	ss := &session{s: s, t: t, id: id}
	if err := ss.startRun(); err != nil {
		return nil, err
	}
	ss.srv = mcp.NewServer(&mcp.Implementation{Name: "skillhost", Title: "skillhost", Version: s.version}, &mcp.ServerOptions{
		Logger: s.sdkLog,
		Capabilities: withSkills(&mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: id != ""},
		}),
		GetSessionID: func() string { return id },
		Instructions: instructions(ss.run),
	})
	ss.srv.AddReceivingMiddleware(ss.middleware)
	ss.addSkills()
	return ss, nil
}

// instructions tells a client's model how to find tools and skills with
// the built-ins in run's catalog: tool_search, and the one skill tool
// family the engine gives its runs.
func instructions(run *registry.Run) string {
	var parts []string
	if run.Visible(registry.ToolSearchName) {
		parts = append(parts, "Tools are loaded on demand: call tool_search to find one that is not listed, then call it by name.")
	}
	switch {
	case run.Visible(registry.ListSkillsName):
		parts = append(parts, "Skills are listed with list_skills and read with load_skill.")
	case run.Visible(registry.SkillSearchName):
		parts = append(parts, "Skills are found with skill_search and read with skill_get.")
	}
	return strings.Join(parts, " ")
}

// startRun gives the session its run: the tenant's policy, grants and
// providers, and its activation scope (a stateless request, id "", is a
// run of its own).
func (ss *session) startRun() error {
	opts := ss.t.RunOptions()
	if ss.id == "" {
		opts.ActivationScope = registry.ScopeRun
	}
	opts.OnActivate = ss.toolsChanged
	run, err := ss.s.e.NewRun(ss.t.RunContext(ss.id), opts)
	if err != nil {
		return err
	}
	ss.run = run
	return nil
}

// httpServer is the getServer function of a tenant's HTTP handlers. The
// stateful handler asks for a server for every request, but only uses
// one made for a request that starts a session, which serveMCP entered in
// the session table; for the others a throwaway server that serves
// nothing is enough.
func (s *Server) httpServer(t *tenant, r *http.Request, stateless bool) *mcp.Server {
	if !stateless {
		e := entryOf(r.Context())
		if e == nil || r.Header.Get("Mcp-Session-Id") != "" {
			return idleServer
		}
		ss, err := e.session(func(id string) (*session, error) {
			ss, err := s.newSession(t, id)
			if ss != nil {
				ss.entry = e
			}
			return ss, err
		})
		if err != nil {
			s.log.Error("starting an MCP session", "tenant", t.ID, "err", err)
			return nil
		}
		return ss.srv
	}
	ss, err := s.newSession(t, "")
	if err != nil {
		s.log.Error("starting an MCP session", "tenant", t.ID, "err", err)
		return nil
	}
	return ss.srv
}

// idleServer answers the stateful handler's per-request question about
// protocol versions.
var idleServer = mcp.NewServer(&mcp.Implementation{Name: "skillhost"}, nil)

// toolsChanged tells the session's client that its tool list changed.
// The SDK notifies a server's sessions when its own tool set changes, and
// each session has a server of its own: a placeholder tool added and
// removed makes that one (debounced) notification. The placeholder is
// never listed or called: tools/list and tools/call are answered from the
// run.
func (ss *session) toolsChanged(string) {
	if ss.id == "" {
		return
	}
	ss.srv.AddTool(&mcp.Tool{Name: placeholderTool, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	ss.srv.RemoveTools(placeholderTool)
}

const placeholderTool = "skillhost.list-changed"

// end forgets the session's activations once its MCP session is over.
func (ss *session) watch(mss *mcp.ServerSession) {
	if ss.id == "" || mss == nil {
		return
	}
	ss.ending.Do(func() {
		if ss.entry != nil && !ss.s.sessions.bind(ss.entry, mss) {
			// Closed to make room before it began.
			mss.Close()
		}
		go func() {
			mss.Wait()
			if ss.entry != nil {
				ss.s.sessions.drop(ss.entry)
			}
			ss.s.e.EndSession(ss.t.ID, ss.id)
		}()
	})
}

// middleware answers tools/list and tools/call from the session's run;
// everything else goes to the SDK.
func (ss *session) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if mss, ok := req.GetSession().(*mcp.ServerSession); ok {
			ss.watch(mss)
		}
		switch method {
		case "tools/list":
			return ss.listTools(protocolOf(req)), nil
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if !ok {
				return next(ctx, method, req)
			}
			return ss.callTool(ctx, r)
		}
		return next(ctx, method, req)
	}
}

// ServeStdio serves one MCP session on in and out until the client
// closes in or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.stdio == nil {
		return fmt.Errorf("%w: %d tenants are configured; name the one to serve on standard input (--tenant)", ErrBadTenants, len(s.tenants))
	}
	ss, err := s.newSession(s.stdio, newSessionID())
	if err != nil {
		return err
	}
	// The SDK sees only lines it can read; the others are answered with
	// a JSON-RPC error and the session goes on (stdio.go).
	lw := &lockedWriter{w: out}
	err = ss.srv.Run(ctx, &mcp.IOTransport{Reader: newStdioReader(in, lw, maxBody), Writer: lw, MaxLineLength: maxBody + 2})
	s.e.EndSession(s.stdio.ID, ss.id)
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// Shutdown stops taking calls and waits for the calls in flight to end,
// or ctx to be done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.ready.Store(false)
	done := make(chan struct{})
	go func() {
		s.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: %w while calls were still running", ctx.Err())
	}
}

// isLoopback reports whether addr (host:port) listens on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// open reports whether the server lets everyone in: it has no tenants
// and accepts no OAuth tokens.
func (s *Server) open() bool {
	return s.local != nil && s.oauth == nil
}

// CheckListen says whether serving on addr is safe with this
// configuration: a non-loopback address needs authentication (tenants
// with keys, or [server.oauth]) and the host names clients will use
// ([server] allowed_hosts).
func (s *Server) CheckListen(addr string) error {
	if isLoopback(addr) {
		return nil
	}
	if s.open() {
		return fmt.Errorf("%w on %s without authentication: add a [tenants.<id>] section with api_keys to skillhost.toml (`skillhost serve keygen` makes a key), or a [server.oauth] section, or listen on 127.0.0.1", ErrUnsafeListen, addr)
	}
	if len(s.cfg.Server.AllowedHosts) == 0 {
		return fmt.Errorf("%w on %s: set [server] allowed_hosts to the host names clients connect with (e.g. [\"mcp.example.com\"]); requests naming another host are refused, against DNS rebinding", ErrUnsafeListen, addr)
	}
	return nil
}

// minLevel passes on the records of at least its level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(attrs), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}
