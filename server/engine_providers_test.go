package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/internal/testenv"
	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/server"
)

// TestEngineProvidersReachTenants: a server without providers of its own
// gives its tenants' runs the engine's (skillhost.Config.Services), each
// call with its tenant's run, and a tenant whose grants leave the service
// out is refused before the provider is asked.
func TestEngineProvidersReachTenants(t *testing.T) {
	dir := t.TempDir()
	pack := filepath.Join(dir, "packs", "capspack")
	os.MkdirAll(pack, 0o755)
	wasm, err := os.ReadFile(filepath.Join("testdata", "capcall.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pack, "m.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(pack, "pack.yaml"), []byte(capsPack), 0o644)

	var mu sync.Mutex
	var asked []string
	test := skillhost.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		tenant := skillhost.RunFrom(ctx).Context().Tenant
		mu.Lock()
		asked = append(asked, tenant+" "+id)
		mu.Unlock()
		return json.Marshal(map[string]string{"served_by": "engine", "tenant": tenant})
	})
	e, err := skillhost.Open(context.Background(), skillhost.Config{
		StateDir: testenv.StateDir(), IndexPath: filepath.Join(dir, "index.db"), NoBundled: true, NoUserSources: true,
		PackDirs: []string{filepath.Join(dir, "packs")},
		Grants:   map[string]skillhost.Grant{"capspack": {Capabilities: []string{"test.echo"}}},
		Services: map[string]skillhost.ServiceProvider{"test": test},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	cfg, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(`
[tenants.acme]
api_keys = ["`+packs.HashKey("acme-key")+`"]

[tenants.narrow]
api_keys = ["`+packs.HashKey("narrow-key")+`"]
[tenants.narrow.grants.capspack]
services = []
`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(e, &server.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ts := (&opsFixture{srv: srv}).serve(t)

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
