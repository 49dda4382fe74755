package packs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

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
	c, err := ParseConfig("skillhost.toml", []byte(good))
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
	if _, err := ParseConfig("skillhost.toml", []byte("[server]\nshared_packs = []\n")); err != nil {
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
			_, err := ParseConfig("skillhost.toml", []byte(c.toml))
			if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "skillhost.toml:") {
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
