package skillhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/packs"
)

// A capability provider registered in Go serves a guest's capability_call
// of its namespace. The guest reaches it because its manifest requests
// mail.send and the operator's [packs.mailer] section grants it; the
// provider finds the run, and so the tenant, in its context.
func ExampleConfig_services() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "mailer-")
	defer os.RemoveAll(dir)
	wasm, _ := os.ReadFile(filepath.Join("testdata", "guests", "wat", "capability.wasm"))
	os.WriteFile(filepath.Join(dir, "m.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(dir, "pack.yaml"), []byte(mailPack), 0o644)
	op, err := packs.ParseConfig(filepath.Join(dir, "skillhost.toml"), []byte(`
[sources]
bundled = false
[packs.mailer]
services = ["mail.send"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}

	mail := skillhost.ServiceProviderFunc(func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
		tenant := skillhost.RunFrom(ctx).Context().Tenant
		return json.Marshal(map[string]string{"queued_for": tenant, "service": id})
	})
	e, err := skillhost.Open(ctx, skillhost.Config{Operator: op, PackDirs: []string{dir}, NoUserSources: true,
		NoIndex: true, StateDir: stateDir, Services: map[string]skillhost.ServiceProvider{"mail": mail}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	run, err := e.NewRun(skillhost.RunContext{Tenant: "acme"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The send tool outputs what its capability_call returned.
	res, err := run.Call(ctx, "send", json.RawMessage(`{"to":"ops@example.com"}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Output))
	// Output: {"output":{"queued_for":"acme","service":"mail.send"},"is_error":false}
}
