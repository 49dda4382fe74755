package serveconf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/packs"
)

// parse reads a config file's bytes and returns its [server] and
// [tenants] sections.
func parse(toml string) (*Config, error) {
	op, err := packs.ParseConfig("skillhost.toml", []byte(toml))
	if err != nil {
		return nil, err
	}
	return Of(op), nil
}

func TestServeConfig(t *testing.T) {
	good := `
[server]
allowed_hosts = ["mcp.example.com", "mcp.example.com:8443", "[::1]:9000"]
shared_packs = ["core"]
audit_log = "-"
memory_budget = "2GiB"
drain_timeout = "45s"

[tenants.acme]
api_keys = ["` + HashKey("k1") + `", "` + HashKey("k2") + `"]
packs = ["web"]
tools = ["web_*", "tool_search"]
deny_tools = ["web_post"]
activation_scope = "session"

[tenants.acme.quotas]
concurrent_calls = 4
calls_per_minute = 100
fuel_per_minute = 1000000
guest_time_per_minute = "30s"
memory = "256MiB"

[tenants.acme.grants.web]
allowed_hosts = ["api.example.com"]
`
	c, err := parse(good)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server
	if len(s.AllowedHosts) != 3 || s.AuditLog != "-" || s.MemoryBudget != 2<<30 || s.DrainTimeout != 45*time.Second || s.SharedPacks[0] != "core" {
		t.Errorf("server = %+v", s)
	}
	if len(c.Tenants) != 1 {
		t.Fatalf("tenants = %+v", c.Tenants)
	}
	a := c.Tenants[0]
	q := a.Quotas
	if a.ID != "acme" || len(a.KeyHashes) != 2 || a.ActivationScope != "session" || len(a.Tools) != 2 || a.DenyTools[0] != "web_post" ||
		q.ConcurrentCalls != 4 || q.CallsPerMinute != 100 || q.FuelPerMinute != 1000000 || q.GuestTimePerMinute != 30*time.Second || q.Memory != 256<<20 ||
		a.Grants["web"].AllowedHosts[0] != "api.example.com" {
		t.Errorf("tenant = %+v", a)
	}
	if _, err := parse("[server]\nshared_packs = []\n"); err != nil {
		t.Errorf("an empty shared_packs: %v", err)
	}
}

// Each mistake is reported with its line and what was expected.
func TestServeConfigErrors(t *testing.T) {
	key := HashKey("k")
	for _, c := range []struct{ name, toml, want string }{
		{"plain key", "[tenants.a]\napi_keys = [\"sk_live_123\"]\n", "not the key itself"},
		{"no keys", "[tenants.a]\npacks = [\"x\"]\n", "has no api_keys"},
		{"shared key", "[tenants.a]\napi_keys = [\"" + key + "\"]\n[tenants.b]\napi_keys = [\"" + key + "\"]\n", "also a key of tenant \"a\""},
		{"tenant id", "[tenants.Acme]\napi_keys = [\"" + key + "\"]\n", "tenant id \"Acme\""},
		{"unknown tenant key", "[tenants.a]\napi_keys = [\"" + key + "\"]\nrole = \"admin\"\n", "expected one of api_keys"},
		{"unknown quota", "[tenants.a]\napi_keys = [\"" + key + "\"]\n[tenants.a.quotas]\nrps = 5\n", "expected one of concurrent_calls"},
		{"zero quota", "[tenants.a]\napi_keys = [\"" + key + "\"]\n[tenants.a.quotas]\nconcurrent_calls = 0\n", "must be from 1"},
		{"duration without unit", "[server]\ndrain_timeout = \"30\"\n", "has no unit"},
		{"duration as number", "[server]\ndrain_timeout = 30\n", "a duration such as"},
		{"bad size", "[server]\nmemory_budget = \"lots\"\n", "is not a size"},
		{"bad host", "[server]\nallowed_hosts = [\"https://x.example/\"]\n", "must be a host name"},
		{"bad scope", "[tenants.a]\napi_keys = [\"" + key + "\"]\nactivation_scope = \"forever\"\n", "activation_scope"},
		{"bad pack name", "[tenants.a]\napi_keys = [\"" + key + "\"]\npacks = [\"Web Tools\"]\n", "is not a pack name"},
		{"unknown server key", "[server]\nport = 8080\n", "expected one of allowed_hosts"},
		{"empty glob", "[tenants.a]\napi_keys = [\"" + key + "\"]\ntools = [\"\"]\n", "is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(c.toml)
			if err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "skillhost.toml:") {
				t.Errorf("error = %v, want one naming the line and %q", err, c.want)
			}
		})
	}
}

func TestServeConfigOAuth(t *testing.T) {
	good := `
[server.oauth]
issuer = "https://auth.example.com"
resource = "https://mcp.example.com/mcp"
jwks_url = "https://auth.example.com/keys"
scopes = ["mcp:tools", "mcp:skills"]
leeway = "10s"

[tenants.acme]
oauth_subjects = ["user-1"]
oauth_clients = ["ci-bot"]
packs = ["web"]

[tenants.beta]
api_keys = ["` + HashKey("k") + `"]
`
	c, err := parse(good)
	if err != nil {
		t.Fatal(err)
	}
	o := c.Server.OAuth
	if o == nil || o.Issuer != "https://auth.example.com" || o.Resource != "https://mcp.example.com/mcp" || o.JWKSURL != "https://auth.example.com/keys" ||
		len(o.Scopes) != 2 || o.Leeway != 10*time.Second || o.TenantClaim != "" {
		t.Errorf("oauth = %+v", o)
	}
	if a := c.Tenants[0]; len(a.KeyHashes) != 0 || a.OAuthSubjects[0] != "user-1" || a.OAuthClients[0] != "ci-bot" {
		t.Errorf("tenant = %+v", a)
	}
	claim := "[server.oauth]\nissuer = \"http://127.0.0.1:9000/realms/x\"\nresource = \"http://localhost:8787/mcp\"\ntenant_claim = \"org\"\n[tenants.a]\npacks = []\n"
	if c, err := parse(claim); err != nil || c.Server.OAuth.TenantClaim != "org" {
		t.Errorf("tenant_claim on loopback http: %v", err)
	}
	if _, err := parse("[server.oauth]\nissuer = \"https://a.example\"\nresource = \"https://m.example/mcp\"\n"); err != nil {
		t.Errorf("OAuth without tenants: %v", err)
	}
}

// Each mistake of [server.oauth] is reported with its line and what was
// expected.
func TestServeConfigOAuthErrors(t *testing.T) {
	const base = "[server.oauth]\nissuer = \"https://auth.example.com\"\nresource = \"https://mcp.example.com/mcp\"\n"
	for _, c := range []struct{ name, toml, want string }{
		{"unknown key", base + "audience = \"x\"\n", "expected one of issuer, resource"},
		{"no issuer", "[server.oauth]\nresource = \"https://mcp.example.com/mcp\"\n", "needs issuer"},
		{"no resource", "[server.oauth]\nissuer = \"https://auth.example.com\"\n", "needs resource"},
		{"plain http", "[server.oauth]\nissuer = \"http://auth.example.com\"\nresource = \"https://mcp.example.com/mcp\"\n", "must use https"},
		{"not a URL", "[server.oauth]\nissuer = \"auth.example.com\"\nresource = \"https://mcp.example.com/mcp\"\n", "issuer identifier"},
		{"fragment", "[server.oauth]\nissuer = \"https://auth.example.com\"\nresource = \"https://mcp.example.com/mcp#x\"\n", "fragment"},
		{"bad jwks_url", base + "jwks_url = \"ftp://auth.example.com/keys\"\n", "JSON Web Key Set"},
		{"bad scope", base + "scopes = [\"a b\"]\n", "is not a scope"},
		{"long leeway", base + "leeway = \"1h\"\n", "more than 5m0s"},
		{"bad claim", base + "tenant_claim = \"\"\n", "must name a claim"},
		{"claim without tenants", base + "tenant_claim = \"tenant\"\n", "no [tenants.<id>] sections"},
		{"claim and subjects", base + "tenant_claim = \"tenant\"\n[tenants.a]\noauth_subjects = [\"u\"]\n", "use one or the other"},
		{"no mapping", base + "[tenants.a]\napi_keys = [\"" + HashKey("k") + "\"]\n", "cannot tell a token's tenant"},
		{"unreachable tenant", base + "[tenants.a]\noauth_subjects = [\"u\"]\n[tenants.b]\npacks = []\n", "no request could be this tenant's"},
		{"shared subject", base + "[tenants.a]\noauth_subjects = [\"u\"]\n[tenants.b]\noauth_subjects = [\"u\"]\n", "also a subject of tenant \"a\""},
		{"shared client", base + "[tenants.a]\noauth_clients = [\"c\"]\n[tenants.b]\noauth_clients = [\"c\"]\n", "also a client of tenant \"a\""},
		{"empty subject", base + "[tenants.a]\noauth_subjects = [\"\"]\n", "is empty"},
		{"subjects without oauth", "[tenants.a]\noauth_subjects = [\"u\"]\n", "no [server.oauth] section"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(c.toml)
			if err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "skillhost.toml:") {
				t.Errorf("error = %v, want one naming the line and %q", err, c.want)
			}
		})
	}
}

func TestHashKey(t *testing.T) {
	h := HashKey("secret")
	if !keyHashRE.MatchString(h) || h == HashKey("secret2") || strings.Contains(h, "secret") {
		t.Errorf("HashKey = %q", h)
	}
}
