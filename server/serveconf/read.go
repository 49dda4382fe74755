package serveconf

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/internal/confwalk"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/tenancy"
)

var keyHashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// reader reads [server] and [tenants] key by key.
type reader struct {
	*confwalk.Walker
	// oauthSeen is set when [server.oauth] is present, even if unusable.
	oauthSeen bool
}

// read is the packs.TableReader of [server] and [tenants]: it returns
// the *Config of the file, the default when it has neither table.
func read(w *confwalk.Walker, tables map[string][]confwalk.Value) any {
	r := &reader{Walker: w}
	c := &Config{}
	for _, kv := range tables["server"] {
		r.server(c, kv)
	}
	for _, kv := range tables["tenants"] {
		r.tenants(c, kv)
	}
	if c.Server.OAuth != nil || !r.oauthSeen { // else its own errors say what is wrong with it
		checkAuth(c, func(key string, line int, format string, args ...any) {
			r.Errorf(confwalk.Value{Key: strings.Split(key, "."), Line: line}, format, args...)
		})
	}
	return c
}

// bounded reads an integer key of bounds.
func (r *reader) bounded(kv confwalk.Value, key string) (int, bool) {
	b := bounds[key]
	return r.Bounded(kv, b.lo, b.hi)
}

// The keys of each table, as the unknown-key message lists them: the
// toml tags of its type, so that a key added to a type is a key of the
// file.
var (
	serverKeys = keyList[Server]()
	oauthKeys  = keyList[OAuth]()
	tenantKeys = keyList[Tenant]()
	quotaKeys  = keyList[tenancy.Quotas]()
)

func keyList[T any]() string { return strings.Join(confwalk.Keys(reflect.TypeFor[T]()), ", ") }

func (r *reader) server(c *Config, kv confwalk.Value) {
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
				if !isAllowedHost(h) {
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
			s.Limits.MaxSessions, _ = r.bounded(k, "max_sessions")
		case "max_tenant_sessions":
			s.Limits.MaxTenantSessions, _ = r.bounded(k, "max_tenant_sessions")
		case "session_idle_timeout":
			s.Limits.SessionIdleTimeout, _ = r.Duration(k)
		case "max_session_streams":
			s.Limits.MaxSessionStreams, _ = r.bounded(k, "max_session_streams")
		case "read_timeout":
			s.Limits.ReadTimeout, _ = r.Duration(k)
		case "write_timeout":
			s.Limits.WriteTimeout, _ = r.Duration(k)
		case "idle_timeout":
			s.Limits.IdleTimeout, _ = r.Duration(k)
		case "max_client_conns":
			s.Limits.MaxClientConns, _ = r.bounded(k, "max_client_conns")
		case "shared_packs":
			s.SharedPacks = packs.ReadPackNames(r.Walker, k)
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

// oauth reads the [server.oauth] section; nil when it is unusable.
func (r *reader) oauth(kv confwalk.Value) *OAuth {
	keys, ok := r.Table(kv, "a table ([server.oauth])")
	if !ok {
		return nil
	}
	o := &OAuth{Line: kv.Line}
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
func (r *reader) oauthURL(kv confwalk.Value, what string) (string, bool) {
	v, ok := r.Str(kv)
	if !ok {
		return "", false
	}
	switch msg := oauthURLProblem(v); msg {
	case "":
		return v, true
	case errNotURL:
		r.Errorf(kv, "%s %q must be %s", kv.Key, v, what)
	default:
		r.Errorf(kv, "%s %q %s", kv.Key, v, msg)
	}
	return "", false
}

// errNotURL is what oauthURLProblem says of a value that is no http or
// https URL with a host.
const errNotURL = "must be an https URL"

// oauthURLProblem says what is wrong with a URL of [server.oauth], or "":
// it must be https, or http to a loopback host (a test or a local
// authorization server), with no fragment.
func oauthURLProblem(v string) string {
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http"):
		return errNotURL
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return "must use https (plain http only for a loopback host such as 127.0.0.1): tokens and keys must not cross the network in the clear"
	case u.Fragment != "" || strings.Contains(v, "#"):
		return "must not have a fragment (#...)"
	}
	return ""
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var hostPortRE = regexp.MustCompile(`^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$`)

func (r *reader) tenants(c *Config, kv confwalk.Value) {
	sections, ok := r.Table(kv, "a table of [tenants.<id>] sections")
	if !ok {
		return
	}
	keyOwner := map[[32]byte]string{}
	for _, sec := range sections {
		id := sec.Key.Last()
		if !tenancy.ValidID(id) {
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

func (r *reader) tenant(sec confwalk.Value) (Tenant, bool) {
	t := Tenant{Line: sec.Line}
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
			t.Packs = packs.ReadPackNames(r.Walker, k)
		case "tools":
			t.Tools = r.globs(k)
		case "deny_tools":
			t.DenyTools = r.globs(k)
		case "activation_scope":
			if s, ok := r.Enum(k, registry.ScopeRun, registry.ScopeSession); ok {
				t.ActivationScope = s
			}
		case "quotas":
			t.Quotas = r.quotas(k)
		case "grants":
			t.Grants = packs.ReadGrants(r.Walker, k)
		default:
			r.Errorf(k, "unknown key %q; expected one of %s", k.Key.String(), tenantKeys)
		}
	}
	return t, true
}

// oauthNames reads a list of subjects or client ids.
func (r *reader) oauthNames(kv confwalk.Value, what string) []string {
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

func (r *reader) quotas(kv confwalk.Value) tenancy.Quotas {
	var q tenancy.Quotas
	keys, ok := r.Table(kv, "a table such as {concurrent_calls = 8, calls_per_minute = 600}")
	if !ok {
		return q
	}
	for _, k := range keys {
		switch k.Key.Last() {
		case "concurrent_calls":
			q.ConcurrentCalls, _ = r.bounded(k, "quotas.concurrent_calls")
		case "calls_per_minute":
			q.CallsPerMinute, _ = r.bounded(k, "quotas.calls_per_minute")
		case "fuel_per_minute":
			if n, ok := r.bounded(k, "quotas.fuel_per_minute"); ok {
				q.FuelPerMinute = int64(n)
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

// globs reads a list of tool name globs.
func (r *reader) globs(kv confwalk.Value) []string {
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
