package server_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/server/serveconf"
)

// TestEngineProvidersReachTenants: the server gives its tenants' runs the
// engine's providers (skillhost.Config.Services), each call with its
// tenant's run, and a tenant whose grants leave the service out is
// refused before the provider is asked.
func TestEngineProvidersReachTenants(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	test := skillhost.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		tenant := skillhost.RunFrom(ctx).Context().Tenant
		mu.Lock()
		asked = append(asked, tenant+" "+id)
		mu.Unlock()
		return json.Marshal(map[string]string{"served_by": "engine", "tenant": tenant})
	})
	_, ts := serveCaps(t, `
[tenants.acme]
api_keys = ["`+serveconf.HashKey("acme-key")+`"]

[tenants.narrow]
api_keys = ["`+serveconf.HashKey("narrow-key")+`"]
[tenants.narrow.grants.capspack]
services = []
`, map[string]skillhost.ServiceProvider{"test": test}, []string{"test.echo"})

	if r := callCap(t, opsClient(t, ts, "acme-key"), "cap_send", nil); r.IsError || string(r.Output) != `{"served_by":"engine","tenant":"acme"}` {
		t.Errorf("acme: %+v (%s)", r, r.Output)
	}
	if r := callCap(t, opsClient(t, ts, "narrow-key"), "cap_send", nil); !r.IsError || r.Error.Code != "permission_denied" {
		t.Errorf("narrow: %+v, want permission_denied", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "acme test.echo" {
		t.Errorf("the engine's provider was asked %q", asked)
	}
}
