package serveconf

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/tenancy"
)

// Validate refuses in a Config built in Go what the reader refuses in a
// file, naming the key; the zero Config and a file's Config pass.
func TestValidate(t *testing.T) {
	key := [32]byte{1}
	oauth := func(o OAuth) *OAuth {
		if o.Issuer == "" {
			o.Issuer = "https://auth.example.com"
		}
		if o.Resource == "" {
			o.Resource = "https://mcp.example.com/mcp"
		}
		return &o
	}
	tenant := func(id string, edit func(*Tenant)) Tenant {
		tn := Tenant{Tenant: tenancy.Tenant{ID: id}, KeyHashes: [][32]byte{{byte(len(id))}}}
		if edit != nil {
			edit(&tn)
		}
		return tn
	}
	for _, c := range []struct {
		name, key string
		cfg       Config
	}{
		{"max_sessions past its bound", "server.max_sessions", Config{Server: Server{Limits: Limits{MaxSessions: 1<<20 + 1}}}},
		{"max_session_streams below its bound", "server.max_session_streams", Config{Server: Server{Limits: Limits{MaxSessionStreams: -1}}}},
		{"a negative read_timeout", "server.read_timeout", Config{Server: Server{Limits: Limits{ReadTimeout: -time.Second}}}},
		{"a host with a scheme", "server.allowed_hosts", Config{Server: Server{AllowedHosts: []string{"https://x.example/"}}}},
		{"an origin with a path", "server.allowed_origins", Config{Server: Server{AllowedOrigins: []string{"https://app.example.com/x"}}}},
		{"an origin not as browsers send it", "server.allowed_origins", Config{Server: Server{AllowedOrigins: []string{"HTTPS://App.example.com:443"}}}},
		{"an otlp_endpoint that is no URL", "server.otlp_endpoint", Config{Server: Server{OTLPEndpoint: "collector:4318"}}},
		{"an OAuth issuer over http", "server.oauth.issuer", Config{Server: Server{OAuth: oauth(OAuth{Issuer: "http://auth.example.com", TenantClaim: "t"})}, Tenants: []Tenant{tenant("a", nil)}}},
		{"no OAuth resource", "server.oauth.resource", Config{Server: Server{OAuth: &OAuth{Issuer: "https://auth.example.com"}}}},
		{"a long leeway", "server.oauth.leeway", Config{Server: Server{OAuth: oauth(OAuth{Leeway: time.Hour})}}},
		{"a claim without tenants", "server.oauth", Config{Server: Server{OAuth: oauth(OAuth{TenantClaim: "tenant"})}}},
		{"a tenant id that is not one", "tenants", Config{Tenants: []Tenant{tenant("Acme", nil)}}},
		{"a key of two tenants", "tenants.b.api_keys", Config{Tenants: []Tenant{tenant("a", func(t *Tenant) { t.KeyHashes = [][32]byte{key} }), tenant("b", func(t *Tenant) { t.KeyHashes = [][32]byte{key} })}}},
		{"a tenant without keys", "tenants.a", Config{Tenants: []Tenant{tenant("a", func(t *Tenant) { t.KeyHashes = nil })}}},
		{"subjects without OAuth", "tenants.a", Config{Tenants: []Tenant{tenant("a", func(t *Tenant) { t.OAuthSubjects = []string{"u"} })}}},
		{"a calls_per_minute quota past its bound", "tenants.a.quotas.calls_per_minute", Config{Tenants: []Tenant{tenant("a", func(t *Tenant) { t.Quotas.CallsPerMinute = 1<<30 + 1 })}}},
		{"a negative fuel quota", "tenants.a.quotas.fuel_per_minute", Config{Tenants: []Tenant{tenant("a", func(t *Tenant) { t.Quotas.FuelPerMinute = -1 })}}},
		{"an unknown activation scope", "tenants.a.activation_scope", Config{Tenants: []Tenant{tenant("a", func(t *Tenant) { t.ActivationScope = "forever" })}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), c.key) {
				t.Errorf("Validate = %v, want ErrBadConfig naming %s", err, c.key)
			}
		})
	}
	if err := (&Config{}).Validate(); err != nil {
		t.Errorf("the zero Config: %v", err)
	}
	good, err := parse(`
[server]
allowed_hosts = ["MCP.example.com:8443"]
allowed_origins = ["HTTPS://App.example.com:443", "*"]
max_sessions = 1048576
max_client_conns = 0

[server.oauth]
issuer = "https://auth.example.com"
resource = "https://mcp.example.com/mcp"
leeway = "5m"

[tenants.a]
oauth_subjects = ["u"]
[tenants.a.quotas]
fuel_per_minute = 9223372036854775807
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := good.Validate(); err != nil {
		t.Errorf("a file's Config: %v", err)
	}
}

// Each bound of the table is where the reader and Validate both draw the
// line: its ends pass, one past them is refused (but a zero field in Go,
// which is the default).
func TestBounds(t *testing.T) {
	set := func(c *Config, key string, n int64) {
		switch section, name, _ := strings.Cut(key, "."); section {
		case "quotas":
			q := reflect.ValueOf(&c.Tenants[0].Quotas).Elem()
			for i := range q.NumField() {
				if strings.Split(q.Type().Field(i).Tag.Get("toml"), ",")[0] == name {
					q.Field(i).SetInt(n)
				}
			}
		default:
			l := reflect.ValueOf(&c.Server.Limits).Elem()
			for i := range l.NumField() {
				if l.Type().Field(i).Tag.Get("toml") == key {
					l.Field(i).SetInt(n)
				}
			}
		}
	}
	toml := func(key string, n int64) string {
		if name, ok := strings.CutPrefix(key, "quotas."); ok {
			return fmt.Sprintf("[tenants.a]\napi_keys = [%q]\n[tenants.a.quotas]\n%s = %d\n", HashKey("k"), name, n)
		}
		return fmt.Sprintf("[server]\n%s = %d\n", key, n)
	}
	for key, b := range bounds {
		for _, c := range []struct {
			n  int64
			ok bool
		}{{b.lo, true}, {b.hi, true}, {b.lo - 1, false}, {b.hi + 1, false}} {
			if c.n == b.hi+1 && b.hi+1 < b.hi {
				continue // past the largest integer
			}
			_, err := parse(toml(key, c.n))
			if (err == nil) != c.ok {
				t.Errorf("%s = %d in a file: %v, want ok %v", key, c.n, err, c.ok)
			}
			cfg := Config{Tenants: []Tenant{{Tenant: tenancy.Tenant{ID: "a"}, KeyHashes: [][32]byte{{1}}}}}
			set(&cfg, key, c.n)
			if err := cfg.Validate(); (err == nil) != (c.ok || c.n == 0) {
				t.Errorf("%s = %d in Go: %v, want ok %v", key, c.n, err, c.ok)
			}
		}
	}
}
