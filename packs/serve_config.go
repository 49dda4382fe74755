package packs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/skillhost/skillhost/internal/confwalk"
)

// ServerConfig is the [server] section: how `skillhost serve` listens,
// whom it lets in and what it keeps of every call.
type ServerConfig struct {
	// AllowedHosts are the Host header values an HTTP request may carry
	// besides the loopback names (localhost, 127.0.0.1, [::1]) a server
	// on loopback always accepts: a request naming any other host is
	// refused, against DNS rebinding. "*" turns the check off.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	// SharedPacks are the packs every tenant sees beside its own; nil
	// means every pack no tenant names as its own.
	SharedPacks []string `json:"shared_packs,omitempty"`
	// AuditLog is where one JSON line per call goes: a file path, "-"
	// for standard output, "" for nowhere.
	AuditLog string `json:"audit_log,omitempty"`
	// MemoryBudget bounds, in bytes, the memory held between calls (idle
	// warm instances and the snapshots fresh-state calls restore from) of
	// every tenant together; 0 means the built-in default (1 GiB).
	MemoryBudget uint64 `json:"memory_budget,omitempty"`
	// DrainTimeout is how long a stopping server lets calls in flight
	// finish; 0 means the built-in default.
	DrainTimeout time.Duration `json:"drain_timeout,omitempty"`
	// TickCheck, when false, makes every call count its fuel; unset or
	// true, calls without a fuel limit check a flag the host changes every
	// 2 ms instead (Linux; see host.Config.WithTickCheck).
	TickCheck *bool `json:"tick_check,omitempty"`
	// OTLPEndpoint is where traces are exported over OTLP/HTTP (an http
	// or https URL); "" leaves it to OTEL_EXPORTER_OTLP_ENDPOINT, and
	// export is off when neither is set.
	OTLPEndpoint string `json:"otlp_endpoint,omitempty"`
	// OAuth is the [server.oauth] section: when set, the server also
	// accepts OAuth access tokens of one authorization server.
	OAuth *OAuthConfig `json:"oauth,omitempty"`
	// AllowedOrigins are the Origin header values a browser's request may
	// carry besides the server's own (an Origin naming the Host the
	// request was sent to): "scheme://host[:port]", or "*" for any. A
	// request with another Origin is refused with 403.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// Limits bound what clients may hold of the server: sessions,
	// streams, connections and the time each step of a request may take.
	// A zero field means its default (see the field docs).
	Limits ServeLimits `json:"limits,omitzero"`
	// Line is where the section starts (0 when absent).
	Line int `json:"-"`
}

// ServeLimits are the [server] keys that bound what HTTP clients may
// hold. A zero field means the default named in its doc.
type ServeLimits struct {
	// MaxSessions bounds the open MCP sessions of every tenant together
	// (max_sessions, default 10000): a new session past it is refused.
	MaxSessions int `json:"max_sessions,omitempty"`
	// MaxTenantSessions bounds one tenant's open sessions
	// (max_tenant_sessions, default 1000): a new session past it closes
	// the tenant's session idle the longest, or is refused when none is
	// idle.
	MaxTenantSessions int `json:"max_tenant_sessions,omitempty"`
	// SessionIdleTimeout closes a session that sent no request for this
	// long (session_idle_timeout, default 30m).
	SessionIdleTimeout time.Duration `json:"session_idle_timeout,omitempty"`
	// MaxSessionStreams bounds the requests one session may have open at
	// once, event streams included (max_session_streams, default 32).
	MaxSessionStreams int `json:"max_session_streams,omitempty"`
	// ReadTimeout bounds the time a client may take to send a request's
	// headers and body (read_timeout, default 30s).
	ReadTimeout time.Duration `json:"read_timeout,omitempty"`
	// WriteTimeout bounds the time one write of an answer may wait for a
	// client that does not read (write_timeout, default 30s); an event
	// stream may stay open longer, as long as the client reads it.
	WriteTimeout time.Duration `json:"write_timeout,omitempty"`
	// IdleTimeout closes a keep-alive connection that carries no request
	// for this long (idle_timeout, default 60s).
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	// MaxClientConns bounds the connections one client address may hold
	// open (max_client_conns); 0, the default, is no bound, as behind a
	// proxy every client has the proxy's address.
	MaxClientConns int `json:"max_client_conns,omitempty"`
}

// OAuthConfig is the [server.oauth] section: `skillhost serve` as an
// OAuth 2.1 resource server, accepting the access tokens (JWTs) that one
// authorization server issues for it, beside the tenants' API keys.
type OAuthConfig struct {
	// Issuer is the authorization server's issuer identifier: a token's
	// iss must be exactly this, and its metadata is found from it.
	Issuer string `json:"issuer"`
	// Resource is this server's MCP endpoint as clients name it, such as
	// "https://mcp.example.com/mcp": the resource indicator (RFC 8707) a
	// token's aud must hold, and the resource of the protected-resource
	// metadata (RFC 9728).
	Resource string `json:"resource"`
	// JWKSURL is where the issuer's signing keys are; "" finds it in the
	// issuer's authorization server metadata.
	JWKSURL string `json:"jwks_url,omitempty"`
	// Scopes must all be granted by a token.
	Scopes []string `json:"scopes,omitempty"`
	// TenantClaim names the token claim whose value is the tenant's id;
	// "" maps tokens by the tenants' oauth_subjects and oauth_clients.
	TenantClaim string `json:"tenant_claim,omitempty"`
	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means the
	// server's default.
	Leeway time.Duration `json:"leeway,omitempty"`
	// Line is where the section starts.
	Line int `json:"-"`
}

// TenantConfig is a [tenants.<id>] section: who a tenant is (its API
// keys, by hash), what it may use and how much.
type TenantConfig struct {
	ID string `json:"id"`
	// KeyHashes are the SHA-256 hashes of the tenant's API keys. A key
	// itself is never stored: the file holds "sha256:<64 hex digits>".
	KeyHashes [][32]byte `json:"-"`
	// Packs are the packs the tenant has besides [server] shared_packs.
	Packs []string `json:"packs,omitempty"`
	// Tools and DenyTools are name globs: a tool the tenant may use
	// matches one of Tools (nil: every tool of its packs) and none of
	// DenyTools.
	Tools     []string `json:"tools,omitempty"`
	DenyTools []string `json:"deny_tools,omitempty"`
	// ActivationScope is "run" or "session" ("" keeps [tool_search]'s).
	ActivationScope string `json:"activation_scope,omitempty"`
	// Quotas bound the tenant's use.
	Quotas Quotas `json:"quotas,omitzero"`
	// Grants narrow what the operator's [packs.<name>] sections grant, for
	// this tenant's calls: the tenant's pack sections, by pack name.
	Grants map[string]PackGrant `json:"grants,omitempty"`
	// OAuthSubjects and OAuthClients map OAuth access tokens to the
	// tenant, when [server.oauth] has no tenant_claim: a token whose sub
	// is one of OAuthSubjects, or else whose client_id (or azp) is one of
	// OAuthClients, is this tenant's.
	OAuthSubjects []string `json:"oauth_subjects,omitempty"`
	OAuthClients  []string `json:"oauth_clients,omitempty"`
	// Line is where the section starts.
	Line int `json:"-"`
}

// Quotas are a tenant's limits; a zero field is no limit.
type Quotas struct {
	// ConcurrentCalls caps the tenant's calls in flight at once.
	ConcurrentCalls int `json:"concurrent_calls,omitempty"`
	// CallsPerMinute caps the calls started in any minute.
	CallsPerMinute int `json:"calls_per_minute,omitempty"`
	// FuelPerMinute caps the instructions the tenant's guests run in a
	// minute (metered calls).
	FuelPerMinute int64 `json:"fuel_per_minute,omitempty"`
	// GuestTimePerMinute caps the time the tenant's guests run in a
	// minute.
	GuestTimePerMinute time.Duration `json:"guest_time_per_minute,omitempty"`
	// Memory caps the guest memory of the tenant's calls in flight
	// together, in bytes.
	Memory uint64 `json:"memory,omitempty"`
}

// KeyHashPrefix starts a stored API key hash.
const KeyHashPrefix = "sha256:"

// HashKey returns how an API key is written in [tenants.<id>] api_keys.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return KeyHashPrefix + hex.EncodeToString(sum[:])
}

var (
	tenantIDRE = regexp.MustCompile(`^[a-z0-9]+([_-][a-z0-9]+)*$`)
	keyHashRE  = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

const (
	serverKeys = "allowed_hosts, allowed_origins, shared_packs, audit_log, memory_budget, drain_timeout, tick_check, otlp_endpoint, " +
		"max_sessions, max_tenant_sessions, session_idle_timeout, max_session_streams, read_timeout, write_timeout, idle_timeout, max_client_conns, oauth"
	oauthKeys  = "issuer, resource, jwks_url, scopes, tenant_claim, leeway"
	tenantKeys = "api_keys, oauth_subjects, oauth_clients, packs, tools, deny_tools, activation_scope, quotas, grants"
	quotaKeys  = "concurrent_calls, calls_per_minute, fuel_per_minute, guest_time_per_minute, memory"
)

func (r *tomlReader) server(c *Config, kv tomlValue) {
	keys, ok := r.Table(kv, "a table ([server])")
	if !ok {
		return
	}
	s := &c.Server
	s.Line = kv.Line
	for _, k := range keys {
		switch k.Key.Last() {
		case "allowed_hosts":
			hosts, _ := r.Strings(k, false)
			for i, h := range hosts {
				if h != "*" && !hostGlobRE.MatchString(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")) && !hostPortRE.MatchString(h) {
					r.Errorf(k, "%s[%d] %q must be a host name such as mcp.example.com (with a port if clients send one, mcp.example.com:8443), or \"*\"", k.Key, i, h)
					continue
				}
				s.AllowedHosts = append(s.AllowedHosts, strings.ToLower(h))
			}
		case "allowed_origins":
			origins, _ := r.Strings(k, false)
			for i, o := range origins {
				norm, ok := NormalizeOrigin(o)
				if !ok && o != "*" {
					r.Errorf(k, "%s[%d] %q must be an origin such as \"https://app.example.com\" (a scheme and a host, with a port if not the scheme's own, no path), or \"*\"", k.Key, i, o)
					continue
				}
				if o == "*" {
					norm = o
				}
				s.AllowedOrigins = append(s.AllowedOrigins, norm)
			}
		case "max_sessions":
			s.Limits.MaxSessions, _ = r.Bounded(k, 1, 1<<20)
		case "max_tenant_sessions":
			s.Limits.MaxTenantSessions, _ = r.Bounded(k, 1, 1<<20)
		case "session_idle_timeout":
			s.Limits.SessionIdleTimeout, _ = r.Duration(k)
		case "max_session_streams":
			s.Limits.MaxSessionStreams, _ = r.Bounded(k, 1, 1<<16)
		case "read_timeout":
			s.Limits.ReadTimeout, _ = r.Duration(k)
		case "write_timeout":
			s.Limits.WriteTimeout, _ = r.Duration(k)
		case "idle_timeout":
			s.Limits.IdleTimeout, _ = r.Duration(k)
		case "max_client_conns":
			s.Limits.MaxClientConns, _ = r.Bounded(k, 0, 1<<20)
		case "shared_packs":
			s.SharedPacks = r.packNames(k)
			if s.SharedPacks == nil {
				s.SharedPacks = []string{}
			}
		case "audit_log":
			if v, ok := r.Str(k); ok {
				if v != "-" && v != "" {
					if p, ok := r.Path(k); ok {
						v = p
					}
				}
				s.AuditLog = v
			}
		case "memory_budget":
			s.MemoryBudget, _ = r.Size(k)
		case "drain_timeout":
			s.DrainTimeout, _ = r.Duration(k)
		case "tick_check":
			if v, ok := r.Bool(k); ok {
				s.TickCheck = &v
			}
		case "otlp_endpoint":
			if v, ok := r.Str(k); ok {
				u, err := url.Parse(v)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					r.Errorf(k, "%s %q must be an http or https URL of an OTLP collector, such as \"http://localhost:4318\"", k.Key, v)
					continue
				}
				s.OTLPEndpoint = v
			}
		case "providers":
			r.Errorf(k, "[server.providers] is not a section of skillhost.toml: capability provider commands are [capabilities.providers.<namespace>] sections, which serve every engine, serve included")
		case "oauth":
			s.OAuth, r.oauthSeen = r.oauth(k), true
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), serverKeys)
		}
	}
}

// MaxOAuthLeeway bounds [server.oauth] leeway: more would accept tokens
// long expired.
const MaxOAuthLeeway = 5 * time.Minute

// oauth reads the [server.oauth] section; nil when it is unusable.
func (r *tomlReader) oauth(kv tomlValue) *OAuthConfig {
	keys, ok := r.Table(kv, "a table ([server.oauth])")
	if !ok {
		return nil
	}
	o := &OAuthConfig{Line: kv.Line}
	bad := false
	for _, k := range keys {
		switch k.Key.Last() {
		case "issuer":
			o.Issuer, ok = r.oauthURL(k, "the authorization server's issuer identifier, such as \"https://auth.example.com\"")
			bad = bad || !ok
		case "resource":
			o.Resource, ok = r.oauthURL(k, "this server's MCP endpoint as clients name it, such as \"https://mcp.example.com/mcp\"")
			bad = bad || !ok
		case "jwks_url":
			o.JWKSURL, ok = r.oauthURL(k, "the URL of the issuer's JSON Web Key Set, such as \"https://auth.example.com/.well-known/jwks.json\"")
			bad = bad || !ok
		case "scopes":
			scopes, _ := r.Strings(k, false)
			for i, sc := range scopes {
				if sc == "" || strings.ContainsAny(sc, " \t\n\"\\") {
					r.Errorf(k, "%s[%d] %q is not a scope: one word such as \"mcp:tools\"", k.Key, i, sc)
					bad = true
					continue
				}
				o.Scopes = append(o.Scopes, sc)
			}
		case "tenant_claim":
			if v, ok := r.Str(k); ok {
				if strings.TrimSpace(v) == "" || strings.ContainsAny(v, " \t\n") {
					r.Errorf(k, "%s %q must name a claim of the access token, such as \"tenant\"", k.Key, v)
					bad = true
					continue
				}
				o.TenantClaim = v
			}
		case "leeway":
			if d, ok := r.Duration(k); ok {
				if d > MaxOAuthLeeway {
					r.Errorf(k, "%s %q is more than %s; a few seconds of clock skew is what it is for", k.Key, d, MaxOAuthLeeway)
					bad = true
					continue
				}
				o.Leeway = d
			}
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), oauthKeys)
		}
	}
	if o.Issuer == "" && !bad {
		r.Errorf(kv, "[%s] needs issuer, the authorization server's issuer identifier, such as \"https://auth.example.com\"", kv.Key)
		bad = true
	}
	if o.Resource == "" && !bad {
		r.Errorf(kv, "[%s] needs resource, this server's MCP endpoint as clients name it, such as \"https://mcp.example.com/mcp\"", kv.Key)
		bad = true
	}
	if bad {
		return nil
	}
	return o
}

// oauthURL reads a URL of [server.oauth]: https, or http to a loopback
// host (a test or a local authorization server), with no fragment.
func (r *tomlReader) oauthURL(kv tomlValue, what string) (string, bool) {
	v, ok := r.Str(kv)
	if !ok {
		return "", false
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http"):
		r.Errorf(kv, "%s %q must be %s", kv.Key, v, what)
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		r.Errorf(kv, "%s %q must use https (plain http only for a loopback host such as 127.0.0.1): tokens and keys must not cross the network in the clear", kv.Key, v)
	case u.Fragment != "" || strings.Contains(v, "#"):
		r.Errorf(kv, "%s %q must not have a fragment (#...)", kv.Key, v)
	default:
		return v, true
	}
	return "", false
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkServe checks what [server] and [tenants] say together, once both
// are read: how a request becomes a tenant.
func (r *tomlReader) checkServe(c *Config) {
	o := c.Server.OAuth
	if o == nil && r.oauthSeen {
		return // its own errors say what is wrong with it
	}
	subjects, clients := map[string]string{}, map[string]string{}
	mapped := false
	for _, t := range c.Tenants {
		sec := tomlValue{Key: confwalk.Key{"tenants", t.ID}, Line: t.Line}
		if o == nil {
			if len(t.OAuthSubjects)+len(t.OAuthClients) > 0 {
				r.Errorf(sec, "[%s] has oauth_subjects or oauth_clients, but there is no [server.oauth] section to accept tokens", sec.Key)
			} else if len(t.KeyHashes) == 0 {
				r.Errorf(sec, "[%s] has no api_keys: a tenant is known by its keys; `skillhost serve keygen` makes one", sec.Key)
			}
			continue
		}
		if o.TenantClaim != "" {
			if len(t.OAuthSubjects)+len(t.OAuthClients) > 0 {
				r.Errorf(sec, "[%s] has oauth_subjects or oauth_clients, but [server.oauth] tenant_claim = %q already names each token's tenant; use one or the other", sec.Key, o.TenantClaim)
			}
			continue
		}
		if len(t.KeyHashes)+len(t.OAuthSubjects)+len(t.OAuthClients) == 0 {
			r.Errorf(sec, "[%s] has no api_keys, oauth_subjects or oauth_clients: no request could be this tenant's", sec.Key)
		}
		for _, sub := range t.OAuthSubjects {
			if other, dup := subjects[sub]; dup {
				r.Errorf(sec, "[%s] oauth_subjects: %q is also a subject of tenant %q; a subject belongs to one tenant", sec.Key, sub, other)
			}
			subjects[sub] = t.ID
			mapped = true
		}
		for _, cl := range t.OAuthClients {
			if other, dup := clients[cl]; dup {
				r.Errorf(sec, "[%s] oauth_clients: %q is also a client of tenant %q; a client belongs to one tenant", sec.Key, cl, other)
			}
			clients[cl] = t.ID
			mapped = true
		}
	}
	if o == nil || len(c.Tenants) == 0 {
		if o != nil && o.TenantClaim != "" {
			r.Errorf(tomlValue{Key: confwalk.Key{"server", "oauth"}, Line: o.Line}, "[server.oauth] tenant_claim = %q maps tokens to tenants, but there are no [tenants.<id>] sections", o.TenantClaim)
		}
		return
	}
	if o.TenantClaim == "" && !mapped {
		r.Errorf(tomlValue{Key: confwalk.Key{"server", "oauth"}, Line: o.Line}, "[server.oauth] cannot tell a token's tenant: set tenant_claim (the claim holding the tenant id), or list oauth_subjects or oauth_clients in the [tenants.<id>] sections")
	}
}

var hostPortRE = regexp.MustCompile(`^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$`)

func (r *tomlReader) tenants(c *Config, kv tomlValue) {
	sections, ok := r.Table(kv, "a table of [tenants.<id>] sections")
	if !ok {
		return
	}
	keyOwner := map[[32]byte]string{}
	for _, sec := range sections {
		id := sec.Key.Last()
		if !tenantIDRE.MatchString(id) {
			r.Errorf(sec, "tenant id %q in [%s] must be lowercase letters and digits separated by single - or _", id, sec.Key)
			continue
		}
		t, ok := r.tenant(sec)
		if !ok {
			continue
		}
		t.ID = id
		for _, h := range t.KeyHashes {
			if other, dup := keyOwner[h]; dup {
				r.Errorf(sec, "[%s] api_keys: the key hash %s%x is also a key of tenant %q; a key identifies one tenant", sec.Key, KeyHashPrefix, h[:4], other)
			}
			keyOwner[h] = id
		}
		c.Tenants = append(c.Tenants, t)
	}
}

func (r *tomlReader) tenant(sec tomlValue) (TenantConfig, bool) {
	t := TenantConfig{Line: sec.Line}
	keys, ok := r.Table(sec, fmt.Sprintf("a table ([%s])", sec.Key))
	if !ok {
		return t, false
	}
	for _, k := range keys {
		switch k.Key.Last() {
		case "api_keys":
			keys, _ := r.Strings(k, false)
			for i, s := range keys {
				if !keyHashRE.MatchString(s) {
					r.Errorf(k, "%s[%d] must be a key's hash, \"sha256:\" and 64 lowercase hex digits, not the key itself: `skillhost serve keygen` makes a key and prints its hash", k.Key, i)
					continue
				}
				var h [32]byte
				hex.Decode(h[:], []byte(s[len(KeyHashPrefix):]))
				t.KeyHashes = append(t.KeyHashes, h)
			}
		case "oauth_subjects":
			t.OAuthSubjects = r.oauthNames(k, "a token's sub")
		case "oauth_clients":
			t.OAuthClients = r.oauthNames(k, "a token's client_id")
		case "packs":
			t.Packs = r.packNames(k)
		case "tools":
			t.Tools = r.globs(k)
		case "deny_tools":
			t.DenyTools = r.globs(k)
		case "activation_scope":
			if s, ok := r.Enum(k, activationRun, activationSession); ok {
				t.ActivationScope = s
			}
		case "quotas":
			t.Quotas = r.quotas(k)
		case "grants":
			t.Grants = r.packGrants(k, fmt.Sprintf("a table of [%s.<pack>] sections", k.Key))
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), tenantKeys)
		}
	}
	return t, true
}

// oauthNames reads a list of subjects or client ids.
func (r *tomlReader) oauthNames(kv tomlValue, what string) []string {
	names, _ := r.Strings(kv, false)
	var out []string
	for i, n := range names {
		if n == "" {
			r.Errorf(kv, "%s[%d] is empty; write %s exactly as the authorization server issues it", kv.Key, i, what)
			continue
		}
		out = append(out, n)
	}
	return out
}

func (r *tomlReader) quotas(kv tomlValue) Quotas {
	var q Quotas
	keys, ok := r.Table(kv, "a table such as {concurrent_calls = 8, calls_per_minute = 600}")
	if !ok {
		return q
	}
	for _, k := range keys {
		switch k.Key.Last() {
		case "concurrent_calls":
			q.ConcurrentCalls, _ = r.Bounded(k, 1, 1<<20)
		case "calls_per_minute":
			q.CallsPerMinute, _ = r.Bounded(k, 1, 1<<30)
		case "fuel_per_minute":
			if n, ok := r.Int(k); ok {
				if n < 1 {
					r.Errorf(k, "%s must be at least 1, got %d", k.Key, n)
					continue
				}
				q.FuelPerMinute = n
			}
		case "guest_time_per_minute":
			q.GuestTimePerMinute, _ = r.Duration(k)
		case "memory":
			q.Memory, _ = r.Size(k)
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), quotaKeys)
		}
	}
	return q
}

// packNames reads a list of pack names.
func (r *tomlReader) packNames(kv tomlValue) []string {
	names, _ := r.Strings(kv, false)
	var out []string
	for i, n := range names {
		if !nameRE.MatchString(n) {
			r.Errorf(kv, "%s[%d] %q is not a pack name: lowercase letters and digits separated by single - or _", kv.Key, i, n)
			continue
		}
		out = append(out, n)
	}
	return out
}

// globs reads a list of tool name globs.
func (r *tomlReader) globs(kv tomlValue) []string {
	gs, _ := r.Strings(kv, false)
	out := []string{}
	for i, g := range gs {
		if strings.TrimSpace(g) == "" {
			r.Errorf(kv, "%s[%d] is empty; write a tool name or a glob such as \"text_*\"", kv.Key, i)
			continue
		}
		out = append(out, g)
	}
	return out
}

// NormalizeOrigin returns origin as browsers send it in an Origin header
// ("scheme://host[:port]", lower case, the scheme's default port left
// out), and whether it is one: an http or https URL with a host and
// nothing after it.
func NormalizeOrigin(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", false
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", false
		}
		if (u.Scheme == "http" && n == 80) || (u.Scheme == "https" && n == 443) {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, true
}
