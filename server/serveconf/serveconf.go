// Package serveconf holds the sections of skillhost.toml that `skillhost
// serve` owns: [server], how it listens, whom it lets in and what it keeps
// of every call, and [tenants.<id>], who each tenant is and what it may
// use. The file's reader hands both tables to this package
// (packs.RegisterReader), which reads them key by key so that every
// problem names its FILE:LINE and key; Of returns what it read.
//
// The package has no HTTP in it: the engine reads it too, for the keys of
// [server] that configure every engine (memory_budget, tick_check) and
// for the tenants whose packs' skills it keeps apart (Config.Tenancy).
package serveconf

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

// ErrBadConfig is matched by every error of Validate and of a file's
// [server] and [tenants] tables; it is confwalk's one sentinel, as
// packs.ErrInvalidConfig and registry.ErrBadConfig are.
var ErrBadConfig = confwalk.ErrBadConfig

// Config is the [server] and [tenants] sections. The zero Config is the
// default: a server of one local tenant, without authentication, with the
// default limits.
type Config struct {
	// Server is the [server] section.
	Server Server `toml:"server"`
	// Tenants are the [tenants.<id>] sections, in file order. With none,
	// `skillhost serve` serves one local tenant without authentication.
	Tenants []Tenant `toml:"tenants"`
}

// Server is the [server] section: how `skillhost serve` listens, whom it
// lets in and what it keeps of every call.
type Server struct {
	// AllowedHosts are the Host header values an HTTP request may carry
	// besides the loopback names (localhost, 127.0.0.1, [::1]) a server
	// on loopback always accepts: a request naming any other host is
	// refused, against DNS rebinding. "*" turns the check off. Default:
	// none, which a server on a non-loopback address refuses.
	AllowedHosts []string `toml:"allowed_hosts"`
	// AllowedOrigins are the Origin header values a browser's request may
	// carry besides the server's own (an Origin naming the Host the
	// request was sent to): "scheme://host[:port]", or "*" for any. A
	// request with another Origin is refused with 403. Default: none.
	AllowedOrigins []string `toml:"allowed_origins"`
	// SharedPacks are the packs every tenant sees beside its own; nil (the
	// default) means every pack no tenant names as its own, and an empty
	// list none (tenancy.New).
	SharedPacks []string `toml:"shared_packs"`
	// AuditLog is where one JSON line per call goes: a file path, "-"
	// for standard output, "" (the default) for nowhere.
	AuditLog string `toml:"audit_log"`
	// MemoryBudget bounds, in bytes, the memory held between calls (idle
	// warm instances and the snapshots fresh-state calls restore from) of
	// every tenant together; 0 means the engine's default (1 GiB).
	MemoryBudget uint64 `toml:"memory_budget"`
	// DrainTimeout is how long a stopping server lets calls in flight
	// finish; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration `toml:"drain_timeout"`
	// TickCheck, when false, makes every call count its fuel; unset or
	// true, calls without a fuel limit check a flag the host changes every
	// 2 ms instead (Linux; see host.Config.WithTickCheck).
	TickCheck *bool `toml:"tick_check"`
	// OTLPEndpoint is where traces are exported over OTLP/HTTP (an http
	// or https URL); "" leaves it to OTEL_EXPORTER_OTLP_ENDPOINT, and
	// export is off when neither is set.
	OTLPEndpoint string `toml:"otlp_endpoint"`
	// Limits bound what clients may hold of the server. Their keys are
	// [server]'s own (max_sessions, read_timeout…), not a table.
	Limits
	// OAuth is the [server.oauth] section: when set, the server also
	// accepts OAuth access tokens of one authorization server.
	OAuth *OAuth `toml:"oauth"`
	// Line is where the section starts (0 when absent).
	Line int `toml:"-"`
}

// Limits are the [server] keys that bound what HTTP clients may hold. A
// zero field means the default named in its doc (WithDefaults).
type Limits struct {
	// MaxSessions bounds the open MCP sessions of every tenant together
	// (default 10000): a new session past it is refused.
	MaxSessions int `toml:"max_sessions"`
	// MaxTenantSessions bounds one tenant's open sessions (default 1000):
	// a new session past it closes the tenant's session idle the longest,
	// or is refused when none is idle.
	MaxTenantSessions int `toml:"max_tenant_sessions"`
	// SessionIdleTimeout closes a session that sent no request for this
	// long (default 30m).
	SessionIdleTimeout time.Duration `toml:"session_idle_timeout"`
	// MaxSessionStreams bounds the requests one session may have open at
	// once, event streams included (default 32).
	MaxSessionStreams int `toml:"max_session_streams"`
	// ReadTimeout bounds the time a client may take to send a request's
	// headers and body (default 30s).
	ReadTimeout time.Duration `toml:"read_timeout"`
	// WriteTimeout bounds the time one write of an answer may wait for a
	// client that does not read (default 30s); an event stream may stay
	// open longer, as long as the client reads it.
	WriteTimeout time.Duration `toml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection that carries no request
	// for this long (default 60s).
	IdleTimeout time.Duration `toml:"idle_timeout"`
	// MaxClientConns bounds the connections one client address may hold
	// open; 0, the default, is no bound, as behind a proxy every client
	// has the proxy's address.
	MaxClientConns int `toml:"max_client_conns"`
}

// Defaults of [server].
const (
	DefaultMaxSessions        = 10000
	DefaultMaxTenantSessions  = 1000
	DefaultSessionIdleTimeout = 30 * time.Minute
	DefaultMaxSessionStreams  = 32
	DefaultReadTimeout        = 30 * time.Second
	DefaultWriteTimeout       = 30 * time.Second
	DefaultIdleTimeout        = 60 * time.Second
	// DefaultDrainTimeout is how long a stopping server lets calls in
	// flight finish when drain_timeout is not set.
	DefaultDrainTimeout = 30 * time.Second
)

// WithDefaults returns l with the default of every field left zero.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxSessions, DefaultMaxSessions)
	def(&l.MaxTenantSessions, DefaultMaxTenantSessions)
	def(&l.MaxSessionStreams, DefaultMaxSessionStreams)
	defDur(&l.SessionIdleTimeout, DefaultSessionIdleTimeout)
	defDur(&l.ReadTimeout, DefaultReadTimeout)
	defDur(&l.WriteTimeout, DefaultWriteTimeout)
	defDur(&l.IdleTimeout, DefaultIdleTimeout)
	return l
}

// OAuth is the [server.oauth] section: `skillhost serve` as an OAuth 2.1
// resource server, accepting the access tokens (JWTs) that one
// authorization server issues for it, beside the tenants' API keys.
type OAuth struct {
	// Issuer is the authorization server's issuer identifier: a token's
	// iss must be exactly this, and its metadata is found from it.
	Issuer string `toml:"issuer"`
	// Resource is this server's MCP endpoint as clients name it, such as
	// "https://mcp.example.com/mcp": the resource indicator (RFC 8707) a
	// token's aud must hold, and the resource of the protected-resource
	// metadata (RFC 9728).
	Resource string `toml:"resource"`
	// JWKSURL is where the issuer's signing keys are; "" finds it in the
	// issuer's authorization server metadata.
	JWKSURL string `toml:"jwks_url"`
	// Scopes must all be granted by a token.
	Scopes []string `toml:"scopes"`
	// TenantClaim names the token claim whose value is the tenant's id;
	// "" maps tokens by the tenants' oauth_subjects and oauth_clients.
	TenantClaim string `toml:"tenant_claim"`
	// Leeway is the clock skew allowed on exp, nbf and iat, at most
	// MaxOAuthLeeway; 0 means the server's default.
	Leeway time.Duration `toml:"leeway"`
	// Line is where the section starts.
	Line int `toml:"-"`
}

// MaxOAuthLeeway bounds [server.oauth] leeway: more would accept tokens
// long expired.
const MaxOAuthLeeway = 5 * time.Minute

// Tenant is a [tenants.<id>] section: what the tenant is (tenancy.Tenant:
// its packs, tool globs, grants, quotas and activation scope) and how a
// request is known to be its own (API keys, OAuth subjects and clients).
type Tenant struct {
	// KeyHashes are the SHA-256 hashes of the tenant's API keys. A key
	// itself is never stored: the file holds "sha256:<64 hex digits>"
	// (HashKey).
	KeyHashes [][32]byte `toml:"api_keys"`
	// OAuthSubjects and OAuthClients map OAuth access tokens to the
	// tenant, when [server.oauth] has no tenant_claim: a token whose sub
	// is one of OAuthSubjects, or else whose client_id (or azp) is one of
	// OAuthClients, is this tenant's.
	OAuthSubjects []string `toml:"oauth_subjects"`
	OAuthClients  []string `toml:"oauth_clients"`
	// Tenant is what the tenant is: its packs, tool globs, activation
	// scope, quotas and grants (its id is the section's name).
	tenancy.Tenant
	// Line is where the section starts.
	Line int `toml:"-"`
}

// bounds are the ranges of the integer keys of [server] and of
// [tenants.<id>.quotas], by key: the reader refuses a value outside its
// range on its line, and Validate a field outside it. A zero field is the
// key's default (or no quota) and is not held to it.
var bounds = map[string]struct{ lo, hi int64 }{
	"max_sessions":            {1, 1 << 20},
	"max_tenant_sessions":     {1, 1 << 20},
	"max_session_streams":     {1, 1 << 16},
	"max_client_conns":        {0, 1 << 20},
	"quotas.concurrent_calls": {1, 1 << 20},
	"quotas.calls_per_minute": {1, 1 << 30},
	"quotas.fuel_per_minute":  {1, math.MaxInt64},
}

// KeyHashPrefix starts a stored API key hash.
const KeyHashPrefix = "sha256:"

// HashKey returns how an API key is written in [tenants.<id>] api_keys.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return KeyHashPrefix + hex.EncodeToString(sum[:])
}

// owner is the name the reader is registered under (packs.Config.Owned).
const owner = "serve"

func init() {
	packs.RegisterReader(owner, []string{"server", "tenants"}, read)
}

// Of returns the [server] and [tenants] sections of an operator config
// read from a file; for any other config (nil, packs.DefaultConfig) the
// zero Config, the default.
func Of(op *packs.Config) *Config {
	if c, ok := op.Owned(owner).(*Config); ok {
		return c
	}
	return &Config{}
}

// Tenancy returns the tenants of c as a tenancy.Set: its [tenants.<id>]
// sections, sharing [server] shared_packs. It fails, matching
// tenancy.ErrBadTenants, when they cannot work together (a pack of two
// tenants, or owned and shared).
func (c *Config) Tenancy() (*tenancy.Set, error) {
	ts := make([]tenancy.Tenant, len(c.Tenants))
	for i, t := range c.Tenants {
		ts[i] = t.Tenant
	}
	return tenancy.New(c.Server.SharedPacks, ts...)
}

// Validate checks what the reader checks of a file, for a Config built in
// Go: the bounds of the integer keys, host names, origins and URLs, tenant
// ids, key hashes and OAuth names each naming one tenant, and how a
// request becomes a tenant. Each error matches ErrBadConfig and names its
// key. Whether the tenants work together is Tenancy's to say.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) { errs = append(errs, confwalk.Invalid(key, format, args...)) }
	s := &c.Server
	for key, n := range map[string]int64{
		"max_sessions": int64(s.Limits.MaxSessions), "max_tenant_sessions": int64(s.Limits.MaxTenantSessions),
		"max_session_streams": int64(s.Limits.MaxSessionStreams), "max_client_conns": int64(s.Limits.MaxClientConns),
	} {
		checkBound(bad, "server."+key, key, n)
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{
		{"session_idle_timeout", s.Limits.SessionIdleTimeout}, {"read_timeout", s.Limits.ReadTimeout}, {"write_timeout", s.Limits.WriteTimeout},
		{"idle_timeout", s.Limits.IdleTimeout}, {"drain_timeout", s.DrainTimeout},
	} {
		if d.d < 0 {
			bad("server."+d.key, "must be a positive duration, got %s", d.d)
		}
	}
	for i, h := range s.AllowedHosts {
		if !isAllowedHost(h) {
			bad("server.allowed_hosts", "[%d] %q must be a host name such as mcp.example.com (with a port if clients send one), or \"*\"", i, h)
		}
	}
	for i, o := range s.AllowedOrigins {
		if norm, ok := NormalizeOrigin(o); o != "*" && (!ok || norm != o) {
			bad("server.allowed_origins", "[%d] %q must be an origin as browsers send it, such as \"https://app.example.com\" (NormalizeOrigin), or \"*\"", i, o)
		}
	}
	if v := s.OTLPEndpoint; v != "" {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("server.otlp_endpoint", "%q must be an http or https URL of an OTLP collector", v)
		}
	}
	if o := s.OAuth; o != nil {
		for _, u := range []struct{ key, v string }{{"issuer", o.Issuer}, {"resource", o.Resource}, {"jwks_url", o.JWKSURL}} {
			if u.v == "" && u.key == "jwks_url" {
				continue
			}
			if msg := oauthURLProblem(u.v); msg != "" {
				bad("server.oauth."+u.key, "%q %s", u.v, msg)
			}
		}
		if o.Leeway < 0 || o.Leeway > MaxOAuthLeeway {
			bad("server.oauth.leeway", "must be from 0 to %s, got %s", MaxOAuthLeeway, o.Leeway)
		}
	}
	keyOwner := map[[32]byte]string{}
	for _, t := range c.Tenants {
		sec := "tenants." + t.ID
		if !tenancy.ValidID(t.ID) {
			bad("tenants", "tenant id %q must be lowercase letters and digits separated by single - or _", t.ID)
			continue
		}
		for _, h := range t.KeyHashes {
			if other, dup := keyOwner[h]; dup {
				bad(sec+".api_keys", "the key hash %s%x is also a key of tenant %q; a key identifies one tenant", KeyHashPrefix, h[:4], other)
			}
			keyOwner[h] = t.ID
		}
		q := t.Quotas
		for key, n := range map[string]int64{"quotas.concurrent_calls": int64(q.ConcurrentCalls), "quotas.calls_per_minute": int64(q.CallsPerMinute), "quotas.fuel_per_minute": q.FuelPerMinute} {
			checkBound(bad, sec+"."+key, key, n)
		}
		switch t.ActivationScope {
		case "", registry.ScopeRun, registry.ScopeSession:
		default:
			bad(sec+".activation_scope", "%q must be one of %s, %s", t.ActivationScope, registry.ScopeRun, registry.ScopeSession)
		}
	}
	checkAuth(c, func(key string, _ int, format string, args ...any) { bad(key, format, args...) })
	return errors.Join(errs...)
}

// checkBound reports n outside the bounds of its key; zero is the default.
func checkBound(bad func(key, format string, args ...any), path, key string, n int64) {
	b := bounds[key]
	if n != 0 && (n < b.lo || n > b.hi) {
		bad(path, "must be from %d to %d, got %d", b.lo, b.hi, n)
	}
}

// checkAuth checks how a request becomes a tenant, once [server] and
// [tenants] are read: every tenant is reachable by a key or a token, and
// a token's tenant can be told. It reports each problem with the key and
// line of the section it is about.
func checkAuth(c *Config, bad func(key string, line int, format string, args ...any)) {
	o := c.Server.OAuth
	subjects, clients := map[string]string{}, map[string]string{}
	mapped := false
	for _, t := range c.Tenants {
		sec := "tenants." + t.ID
		if o == nil {
			if len(t.OAuthSubjects)+len(t.OAuthClients) > 0 {
				bad(sec, t.Line, "[%s] has oauth_subjects or oauth_clients, but there is no [server.oauth] section to accept tokens", sec)
			} else if len(t.KeyHashes) == 0 {
				bad(sec, t.Line, "[%s] has no api_keys: a tenant is known by its keys; `skillhost serve keygen` makes one", sec)
			}
			continue
		}
		if o.TenantClaim != "" {
			if len(t.OAuthSubjects)+len(t.OAuthClients) > 0 {
				bad(sec, t.Line, "[%s] has oauth_subjects or oauth_clients, but [server.oauth] tenant_claim = %q already names each token's tenant; use one or the other", sec, o.TenantClaim)
			}
			continue
		}
		if len(t.KeyHashes)+len(t.OAuthSubjects)+len(t.OAuthClients) == 0 {
			bad(sec, t.Line, "[%s] has no api_keys, oauth_subjects or oauth_clients: no request could be this tenant's", sec)
		}
		for _, sub := range t.OAuthSubjects {
			if other, dup := subjects[sub]; dup {
				bad(sec, t.Line, "[%s] oauth_subjects: %q is also a subject of tenant %q; a subject belongs to one tenant", sec, sub, other)
			}
			subjects[sub] = t.ID
			mapped = true
		}
		for _, cl := range t.OAuthClients {
			if other, dup := clients[cl]; dup {
				bad(sec, t.Line, "[%s] oauth_clients: %q is also a client of tenant %q; a client belongs to one tenant", sec, cl, other)
			}
			clients[cl] = t.ID
			mapped = true
		}
	}
	if o == nil || len(c.Tenants) == 0 {
		if o != nil && o.TenantClaim != "" {
			bad("server.oauth", o.Line, "[server.oauth] tenant_claim = %q maps tokens to tenants, but there are no [tenants.<id>] sections", o.TenantClaim)
		}
		return
	}
	if o.TenantClaim == "" && !mapped {
		bad("server.oauth", o.Line, "[server.oauth] cannot tell a token's tenant: set tenant_claim (the claim holding the tenant id), or list oauth_subjects or oauth_clients in the [tenants.<id>] sections")
	}
}

// isAllowedHost reports whether h may be an allowed_hosts entry: "*", a
// host name or glob, or one with a port.
func isAllowedHost(h string) bool {
	return h == "*" || packs.IsHostGlob(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")) || hostPortRE.MatchString(h)
}
